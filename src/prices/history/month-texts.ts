import type { Database, Queryable } from '../../db/types.js';
import { passOverProducts, type ProductsPass } from '../passes.js';

/**
 * The month texts of the UTC days (migrations/0025_price_day_texts.sql, docs/prices/HISTORY.md
 * "Month texts"): a cache of the day rows as the history's answer writes them, built here for the
 * UTC months that ended by the build's midnight and dropped by the day rows' triggers when any of
 * their days changes. The history reads the day rows of a month without texts, so building is
 * never needed for a right answer, only for a fast one.
 */

/** Products per transaction of a pass (~11 series a product): their ingestion waits for it (the build locks them). */
export const MONTH_TEXT_BATCH_PRODUCTS = 4;

/**
 * Builds the missing month texts of `productIds` for the UTC months that ended by `before`'s UTC
 * midnight (from the month of `since` on, all of them without); returns the rows written.
 */
export async function buildMonthTexts(
  db: Queryable,
  productIds: readonly string[],
  before: Date,
  since?: Date,
): Promise<number> {
  const r = await db.query<{ n: number }>(`/* buildMonthTexts */ select price_day_texts_build($1, $2, $3) as n`, [
    productIds,
    before.toISOString(),
    since?.toISOString() ?? '-infinity',
  ]);
  return Number(r.rows[0]!.n);
}

/** One pass over every product (src/prices/passes.ts): the missing month texts ended by `before`, from `since` on. */
export function buildAllMonthTexts(
  db: Database,
  opts: { before: Date; since?: Date; batchProducts?: number; stop?: () => boolean },
): Promise<ProductsPass> {
  return passOverProducts(db, buildMonthTexts, { ...opts, batch: opts.batchProducts ?? MONTH_TEXT_BATCH_PRODUCTS });
}
