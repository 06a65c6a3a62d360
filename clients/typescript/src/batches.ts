import type { paths } from './openapi.js';

/** Items the service takes in one batch request (`maxItems` of POST /products/batch and POST /prices). */
export const BATCH_MAX = 1000;

type JsonBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

type ProductsBatch = paths['/api/v1/products/batch']['post'];
type PricesBatch = paths['/api/v1/prices']['post'];
export type ProductInput = JsonBody<ProductsBatch>['products'][number];
export type ProductsBatchResult = JsonOk<ProductsBatch>;
export type PriceObservationInput = JsonBody<PricesBatch>['observations'][number];
export type PricesBatchResult = JsonOk<PricesBatch>;

export interface BatchOptions {
  /**
   * All or nothing (the service's `atomic`). It covers one request, so it needs at most
   * BATCH_MAX items: with more, some batches could be done and others not.
   */
  atomic?: boolean;
  signal?: AbortSignal;
  /** After each batch: items sent so far, and in all. */
  onProgress?(done: number, total: number): void;
}

interface BatchAnswer {
  data: { index: number }[];
  created: number;
  failed: number;
}

/**
 * Sends `items` in batches of BATCH_MAX, one after another, and merges the answers into one:
 * `data` holds every item's outcome with `index` counted over all `items`, `created` and
 * `failed` add up. Each batch is one POST with its own Idempotency-Key, retried as any call.
 */
export async function inBatches<R extends BatchAnswer>(
  items: readonly unknown[],
  options: BatchOptions,
  send: (batch: unknown[], atomic: boolean | undefined, signal: AbortSignal | undefined) => Promise<R>,
): Promise<R> {
  if (options.atomic && items.length > BATCH_MAX) {
    throw new RangeError(`atomic covers one request of at most ${BATCH_MAX} items; got ${items.length}`);
  }
  const merged = { data: [] as BatchAnswer['data'], created: 0, failed: 0 };
  for (let start = 0; start < items.length; start += BATCH_MAX) {
    const answer = await send(items.slice(start, start + BATCH_MAX), options.atomic, options.signal);
    for (const item of answer.data) merged.data.push({ ...item, index: item.index + start });
    merged.created += answer.created;
    merged.failed += answer.failed;
    options.onProgress?.(Math.min(items.length, start + BATCH_MAX), items.length);
  }
  return merged as R;
}
