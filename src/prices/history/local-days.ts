import type { Database, Queryable } from '../../db/types.js';
import { passOverProducts, type ProductsPass } from '../passes.js';

/**
 * The local days of the zones HISTORY_ZONES lists, the history's day buckets in those zones read
 * instead of their hours (migrations/0024_price_local_days.sql, docs/prices/HISTORY.md "Day
 * buckets away from UTC"): a cache, built here for the local days that ended an hour before the
 * build and dropped by the hour rows' triggers when any of their hours changes. The history reads
 * the hours of a local day without rows, so building is never needed for a right answer, only
 * for a fast one.
 */

/** Products per transaction of a pass (~11 series a product): their ingestion waits for it (the build locks them). */
export const LOCAL_DAY_BATCH_PRODUCTS = 4;

/**
 * Builds the missing local days in `zones` of `productIds` that ended an hour before `before`
 * (from the local day of `since` on, all of them without); returns the rows written.
 */
export async function buildLocalDays(
  db: Queryable,
  zones: readonly string[],
  productIds: readonly string[],
  before: Date,
  since?: Date,
): Promise<number> {
  if (zones.length === 0) return 0;
  const r = await db.query<{ n: number }>(`/* buildLocalDays */ select price_local_days_build($1, $2, $3, $4) as n`, [
    productIds,
    zones,
    before.toISOString(),
    since?.toISOString() ?? '-infinity',
  ]);
  return Number(r.rows[0]!.n);
}

/** One pass over every product (src/prices/passes.ts): the missing local days in `zones` ended by `before`, from `since` on. */
export function buildAllLocalDays(
  db: Database,
  zones: readonly string[],
  opts: { before: Date; since?: Date; batchProducts?: number; stop?: () => boolean },
): Promise<ProductsPass> {
  return passOverProducts(db, (tx, ids, before, since) => buildLocalDays(tx, zones, ids, before, since), {
    ...opts,
    batch: opts.batchProducts ?? LOCAL_DAY_BATCH_PRODUCTS,
  });
}
