import { type ProductInput, streamBatches } from './batches.js';
import type { PricehoundClient } from './client.js';
import { ApiError, type ErrorDetail } from './errors.js';
import { BATCH_MAX } from './limits.js';
import type { components } from './openapi.js';
import type { ProductCsvRow } from './products-csv.js';

type Product = components['schemas']['Product'];

/**
 * What became of an imported row: `created`; `updated` (with `update`, its SKU was there and
 * something changed); `present` (its SKU was there: nothing changed, or `update` was off);
 * `failed` (`problems` say why, as the service or the CSV reader named them).
 */
export type ImportResult = 'created' | 'updated' | 'present' | 'failed';

export interface ImportedRow {
  row: number;
  line: number;
  sku: string | null;
  name: string;
  result: ImportResult;
  /** The product created, updated or found. */
  productId?: string;
  problems: ErrorDetail[];
}

export interface ImportOptions {
  /** Rows per POST /products/batch, 1 to 1000 (default 1000). */
  batchSize?: number;
  /**
   * Products whose SKU is already in the account are changed to the row's values (a PATCH each,
   * only when something differs) instead of being left as they are. Reads the catalogue once
   * first (a request per 100 products).
   */
  update?: boolean;
  signal?: AbortSignal;
  /** The Idempotency-Key of the batch of these rows (default: a new one per request): a resumed import can send a batch again safely. */
  idempotencyKey?(rows: readonly ProductCsvRow[]): string | undefined;
}

const nameOf = (p: ProductInput) => (typeof p.name === 'string' ? p.name : '');
const skuOf = (p: ProductInput) => (typeof p.sku === 'string' ? p.sku : null);

/** A 409 of the batch whose only problem is a SKU the account already has. */
const skuTaken = (details: ErrorDetail[] | undefined) =>
  Boolean(details?.some((d) => d.field === 'sku' && d.message.startsWith('is already used')));

/** The fields of `input` whose values differ from `current`'s (currency in any case, amounts as numbers). */
function changes(input: ProductInput, current: Product): Partial<ProductInput> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const now = (current as unknown as Record<string, unknown>)[key];
    const same =
      key === 'currency'
        ? String(value).toUpperCase() === now
        : key === 'base_price'
          ? Number(value) === Number(now)
          : value === now;
    if (!same) out[key] = value;
  }
  return out as Partial<ProductInput>;
}

/**
 * Imports products read from a CSV (`ProductCsvReader`), a batch at a time, yielding each batch's
 * rows with what became of them: the CLI's `import products` and the dashboard's Import CSV.
 * Rows the reader refused are `failed` without a request; the others go to POST /products/batch.
 */
export async function* importProducts(
  client: PricehoundClient,
  rows: Iterable<ProductCsvRow> | AsyncIterable<ProductCsvRow>,
  options: ImportOptions = {},
): AsyncGenerator<ImportedRow[], void, undefined> {
  // With `update`, the catalogue's SKUs, read when there is a first batch to send.
  let bySku: Map<string, Product> | undefined;
  const send = async (batch: ProductCsvRow[]) => {
    if (options.update && !bySku) {
      bySku = new Map();
      for await (const p of client.paginate('/api/v1/products', { signal: options.signal }))
        if (p.sku !== null) bySku.set(p.sku, p);
    }
    return importBatch(client, batch, bySku, options);
  };
  yield* streamBatches(rows, options.batchSize ?? BATCH_MAX, send);
}

async function importBatch(
  client: PricehoundClient,
  rows: ProductCsvRow[],
  bySku: Map<string, Product> | undefined,
  options: ImportOptions,
): Promise<ImportedRow[]> {
  const out: ImportedRow[] = [];
  const seen = (row: ProductCsvRow, result: ImportResult, problems: ErrorDetail[], productId?: string) =>
    out.push({
      row: row.row,
      line: row.line,
      sku: skuOf(row.product),
      name: nameOf(row.product),
      result,
      problems,
      ...(productId ? { productId } : {}),
    });
  const create: ProductCsvRow[] = [];
  for (const row of rows) {
    const sku = skuOf(row.product);
    const existing = sku === null ? undefined : bySku?.get(sku);
    if (row.problems.length > 0) seen(row, 'failed', row.problems);
    else if (existing) {
      const changed = changes(row.product, existing);
      if (Object.keys(changed).length === 0) {
        seen(row, 'present', [], existing.id);
        continue;
      }
      try {
        const updated = await client.PATCH('/api/v1/products/{id}', {
          params: { path: { id: existing.id } },
          body: changed,
          signal: options.signal,
        });
        bySku!.set(sku!, updated);
        seen(row, 'updated', [], updated.id);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        seen(row, 'failed', err.details.length > 0 ? err.details : [{ field: '', message: err.message }], existing.id);
      }
    } else create.push(row);
  }
  if (create.length > 0) {
    const key = options.idempotencyKey?.(create);
    const answer = await client.POST('/api/v1/products/batch', {
      body: { products: create.map((r) => r.product) },
      ...(key ? { params: { header: { 'Idempotency-Key': key } } } : {}),
      signal: options.signal,
    });
    for (const item of answer.data) {
      const row = create[item.index]!;
      if (item.status === 201) {
        if (bySku && item.product.sku !== null) bySku.set(item.product.sku, item.product);
        seen(row, 'created', [], item.product.id);
        continue;
      }
      const details = item.error.details?.length ? item.error.details : [{ field: '', message: item.error.error }];
      const problems = details.map((d) => ({ field: d.field.replace(/^products\[\d+\]\./, ''), message: d.message }));
      seen(row, item.status === 409 && skuTaken(item.error.details) ? 'present' : 'failed', problems);
    }
  }
  return out.sort((a, b) => a.row - b.row);
}
