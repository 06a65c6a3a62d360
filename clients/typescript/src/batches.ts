import { BATCH_MAX } from './limits.js';
import type { components, paths } from './openapi.js';

type JsonBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type Schemas = components['schemas'];

export type ProductInput = JsonBody<paths['/api/v1/products/batch']['post']>['products'][number];
export type PriceObservationInput = JsonBody<paths['/api/v1/prices']['post']>['observations'][number];
export type ListingInput = JsonBody<paths['/api/v1/listings/batch']['post']>['listings'][number];

/**
 * Batch answers: `data` holds each item's outcome, a union on `status`: 201 with the resource,
 * or a failure with `error`. Narrow on `status` (no casts):
 *
 *     for (const item of result.data) {
 *       if (item.status === 201) console.log(item.product.id);
 *       else console.log(item.index, item.error.code, item.error.details);
 *     }
 */
export type ProductsBatchResult = Schemas['ProductBatchResult'];
export type ProductBatchItem = ProductsBatchResult['data'][number];
export type PricesBatchResult = Schemas['PriceObservationBatchResult'];
export type PriceBatchItem = PricesBatchResult['data'][number];
export type ListingsBatchResult = Schemas['ListingBatchResult'];
export type ListingBatchItem = ListingsBatchResult['data'][number];

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

/**
 * The streaming form for imports: groups `rows` (read as they come) into batches of `size` (1 to
 * BATCH_MAX) and yields what `send` makes of each, one batch in flight at a time.
 */
export async function* streamBatches<R, T>(
  rows: Iterable<R> | AsyncIterable<R>,
  size: number,
  send: (batch: R[]) => Promise<T>,
): AsyncGenerator<T, void, undefined> {
  if (!Number.isInteger(size) || size < 1 || size > BATCH_MAX)
    throw new RangeError(`batchSize must be a whole number from 1 to ${BATCH_MAX}`);
  let batch: R[] = [];
  for await (const row of rows) {
    batch.push(row);
    if (batch.length >= size) {
      yield await send(batch);
      batch = [];
    }
  }
  if (batch.length > 0) yield await send(batch);
}
