import type { Database, Queryable } from '../../db/types.js';
import { passOverProducts, type ProductsPass } from '../passes.js';

/**
 * The blocks of whole days the trends statement reads instead of their day rows
 * (migrations/0022_price_blocks.sql, docs/prices/TRENDS.md "Blocks"): a cache, built here for
 * the blocks that ended by `before`'s UTC midnight and dropped by the day rows' triggers when
 * any of their days changes. The statement reads the day rows of a block without its rows, so
 * building is never needed for a right answer, only for a fast one.
 */

/** Products per transaction of a pass (~11 series a product): their ingestion waits for it (the build locks them). */
export const BLOCK_BATCH_PRODUCTS = 4;

/**
 * Builds the missing blocks of `productIds` that ended by `before`'s UTC midnight (from the block
 * of `since` on, all of them without); returns the block rows written.
 */
export async function buildPriceBlocks(
  db: Queryable,
  productIds: readonly string[],
  before: Date,
  since?: Date,
): Promise<number> {
  const r = await db.query<{ n: number }>(`/* buildPriceBlocks */ select price_blocks_build($1, $2, $3) as n`, [
    productIds,
    before.toISOString(),
    since?.toISOString() ?? '-infinity',
  ]);
  return Number(r.rows[0]!.n);
}

/**
 * One pass over every product (src/prices/passes.ts, BLOCK_BATCH_PRODUCTS per transaction): the
 * missing blocks that ended by `before`'s midnight, from `since`'s block on. `stop` is checked
 * between batches.
 */
export function buildAllPriceBlocks(
  db: Database,
  opts: { before: Date; since?: Date; batchProducts?: number; stop?: () => boolean },
): Promise<ProductsPass> {
  return passOverProducts(db, buildPriceBlocks, { ...opts, batch: opts.batchProducts ?? BLOCK_BATCH_PRODUCTS });
}
