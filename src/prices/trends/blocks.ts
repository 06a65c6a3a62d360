import type { Database, Queryable } from '../../db/types.js';
import { DAY_MS } from '../../time.js';

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

export interface BlocksPass {
  products: number;
  rows: number;
}

/**
 * One pass over every product (by id, BLOCK_BATCH_PRODUCTS per transaction, so a pass holds no
 * long transaction and an interrupted one loses at most a batch): the missing blocks that ended
 * by `before`'s midnight, from `since`'s block on. `stop` is checked between batches.
 */
export async function buildAllPriceBlocks(
  db: Database,
  opts: { before: Date; since?: Date; batchProducts?: number; stop?: () => boolean },
): Promise<BlocksPass> {
  const out: BlocksPass = { products: 0, rows: 0 };
  const batch = opts.batchProducts ?? BLOCK_BATCH_PRODUCTS;
  let after = '';
  for (;;) {
    if (opts.stop?.()) return out;
    const ids = (
      await db.query<{ id: string }>(`/* blockProducts */ select id from products where id > $1 order by id limit $2`, [
        after,
        batch,
      ])
    ).rows.map((r) => r.id);
    if (ids.length === 0) return out;
    out.rows += await db.transaction((tx) => buildPriceBlocks(tx, ids, opts.before, opts.since));
    out.products += ids.length;
    after = ids[ids.length - 1]!;
  }
}

/** A pass over the whole history (blocks the roll-up or older late data dropped) is due this long after the last one finished. */
export const FULL_PASS_EVERY_MS = 7 * DAY_MS;
/** The full pass's row in task_passes (migrations/0023). */
const FULL_PASS = 'price-blocks-full';

interface PassState {
  cursor: string | null;
  done_at: Date | string | null;
}

const due = (s: PassState | undefined, now: number) =>
  !s || s.cursor !== null || s.done_at === null || new Date(s.done_at).getTime() <= now - FULL_PASS_EVERY_MS;

export async function fullPassDue(db: Database, now: number): Promise<boolean> {
  const r = await db.query<PassState>(`/* blocksPassState */ select cursor, done_at from task_passes where task = $1`, [
    FULL_PASS,
  ]);
  return due(r.rows[0], now);
}

/**
 * The pass over the whole history, batch by batch from task_passes' cursor: each batch's
 * transaction holds the pass's row, builds the products after the cursor and moves it on, so
 * processes share the pass and one that dies loses nothing done. Ends when the pass is done (by
 * this process or another one) or `stop` says so between batches.
 */
export async function fullPass(
  db: Database,
  now: number,
  batch: number,
  stop: () => boolean,
  analyzeAfterRows = ANALYZE_AFTER_ROWS,
): Promise<{ products: number; rows: number; done: boolean }> {
  const out = { products: 0, rows: 0, done: false };
  await db.query(`/* blocksPassRow */ insert into task_passes (task) values ($1) on conflict (task) do nothing`, [
    FULL_PASS,
  ]);
  while (!out.done && !stop())
    await db.transaction(async (tx) => {
      const state = (
        await tx.query<PassState>(
          `/* blocksPassLock */ select cursor, done_at from task_passes where task = $1 for update`,
          [FULL_PASS],
        )
      ).rows[0];
      if (!due(state, now)) return void (out.done = true);
      const ids = (
        await tx.query<{ id: string }>(
          `/* blockProducts */ select id from products where id > $1 order by id limit $2`,
          [state?.cursor ?? '', batch],
        )
      ).rows.map((r) => r.id);
      if (ids.length > 0) {
        out.rows += await buildPriceBlocks(tx, ids, new Date(now));
        out.products += ids.length;
      } else out.done = true;
      await tx.query(
        `/* blocksPassMove */ update task_passes set cursor = $2, done_at = coalesce($3, done_at) where task = $1`,
        [FULL_PASS, ids.at(-1) ?? null, out.done ? new Date(now).toISOString() : null],
      );
    });
  // A first pass on a database with history fills the month partitions in an hour or so, while
  // autovacuum may be busy with the large tables: planned from their empty state's statistics,
  // each partition was read through the account's index (50.5 M observations: 51-97 ms of
  // PostgreSQL a trends request, ~11 after ANALYZE; docs/BENCHMARKS.md). Seconds, at most weekly.
  if (out.rows >= analyzeAfterRows) await db.query('/* blocksAnalyze */ analyze price_blocks');
  return out;
}

/** Block rows a pass writes before it analyzes the table (a few hundred products' year). */
export const ANALYZE_AFTER_ROWS = 20_000;
