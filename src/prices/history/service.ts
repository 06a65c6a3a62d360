import type { Queryable } from '../../db/types.js';
import { ERRORS } from '../../http/errors.js';
import { eachPage, type PageRequest, pageRequest } from '../../pagination/page.js';
import type { HistoryRange } from './params.js';
import type { BucketUnit } from './schemas.js';
import {
  type BucketRow,
  defaultSource,
  historyQuery,
  type HistoryParams,
  type ObservationRow,
  observedProductsQuery,
  RAW_SORTS,
  rawQuery,
  type SqlQuery,
} from './sql.js';

/** PostgreSQL's "invalid_parameter_value", which is what an unknown time zone name raises. */
const PG_INVALID_PARAMETER_VALUE = '22023';

/**
 * Runs one of the history's statements. A zone Node knows but the database's time zone data
 * does not (the two are updated separately) is the caller's bad `tz`, not a 500.
 */
async function run<T>(db: Queryable, q: SqlQuery): Promise<T[]> {
  try {
    return (await db.query<T>(q.text, q.values)).rows;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === PG_INVALID_PARAMETER_VALUE && /time zone/i.test(e.message ?? '')) {
      throw ERRORS.invalidQuery([{ field: 'tz', message: 'is not a time zone the database knows' }]);
    }
    throw err;
  }
}

/**
 * The bucket rows of a product's history (see historyQuery, from the source defaultSource picks
 * knowing HISTORY_ZONES' `zones`); 404 when the product is not the account's.
 */
export async function bucketRows(
  db: Queryable,
  p: HistoryParams & { interval: BucketUnit },
  zones: readonly string[],
): Promise<BucketRow[]> {
  const rows = await run<BucketRow>(db, historyQuery(p, defaultSource(p, zones)));
  if (rows.length === 0) throw ERRORS.notFound('Product');
  return rows;
}

/** A page of raw observations (see rawQuery); 404 when the product is not the account's. */
export async function rawRows(
  db: Queryable,
  p: HistoryParams,
  page: PageRequest<ObservationRow>,
): Promise<ObservationRow[]> {
  const rows = await run<ObservationRow>(db, rawQuery(p, page));
  if (rows.length === 0) throw ERRORS.notFound('Product');
  return rows.filter((r) => r.id !== null);
}

/** `limit` and `cursor` page raw answers only; sent with buckets they are a mistake worth saying. */
export function refusePagingOfBuckets(
  q: { limit?: number | undefined; cursor?: string | undefined },
  interval: string,
): void {
  const details = (['limit', 'cursor'] as const)
    .filter((f) => q[f] !== undefined)
    .map((field) => ({ field, message: `is only for interval=raw, not interval=${interval}` }));
  if (details.length > 0) throw ERRORS.invalidQuery(details);
}

/** Observations per query of an export: each page a short statement, one page held at a time. */
export const EXPORT_PAGE_ROWS = 5000;

/** An observation of an account-wide export: the product's SKU beside it. */
export type AccountObservationRow = ObservationRow & { sku: string | null };

/**
 * Every observation in `range` of the products `products` yields (a page of them at a time),
 * product after product in their order, each product's oldest first: one query per page of
 * products finds those with anything in the range, then a query per page of each one's
 * observations (the statement of `interval=raw`). A product deleted meanwhile just has none.
 */
export async function* accountObservationPages(
  db: Queryable,
  accountId: string,
  products: AsyncIterable<{ id: string; sku: string | null }[]>,
  range: HistoryRange,
): AsyncGenerator<AccountObservationRow[]> {
  for await (const page of products) {
    if (page.length === 0) continue;
    const observed = new Set(
      (
        await run<{ id: string }>(db, observedProductsQuery({ ...range, accountId, productIds: page.map((p) => p.id) }))
      ).map((r) => r.id),
    );
    for (const product of page) {
      if (!observed.has(product.id)) continue;
      const p: HistoryParams = { ...range, productId: product.id, accountId };
      const first = pageRequest({ limit: EXPORT_PAGE_ROWS }, RAW_SORTS, 'observed_at');
      const load = async (pg: PageRequest<ObservationRow>) =>
        (await run<ObservationRow>(db, rawQuery(p, pg))).filter((r) => r.id !== null);
      for await (const rows of eachPage(first, load)) {
        if (rows.length > 0) yield rows.map((r) => ({ ...r, sku: product.sku }));
      }
    }
  }
}
