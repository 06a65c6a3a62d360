import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { DAY_MS } from '../../time.js';
import { ANALYZE_AFTER_ROWS, cacheRun } from '../passes.js';
import { BLOCK_BATCH_PRODUCTS, buildPriceBlocks } from './blocks.js';
import { productsReadSince } from './reads.js';
import { analyzePriceSpans, buildPriceSpans, SPAN_BATCH_PRODUCTS, utcMidnight } from './spans.js';

/** A run looks this far back for blocks to build: the blocks ended since, and those late data dropped. */
const RECENT_MS = 10 * DAY_MS;

/**
 * The periodic build of the trends' blocks of whole days (migrations/0022, docs/prices/TRENDS.md
 * "Blocks"): every product's missing blocks that ended before today's UTC midnight, in short
 * transactions of a few products. Only a cache: the trends read the day rows of a block without
 * its rows. A run looks at the last 10 days, or continues the pass over the whole history when
 * one is due or in progress (task_passes' row `price-blocks-full`, src/prices/passes.ts: ~10 ms
 * a product with nothing to build, once a week).
 */
export function blocksRun(
  db: Database,
  log: Logger,
  clock: Clock,
  opts: { batchProducts?: number; analyzeAfterRows?: number } = {},
): (signal: AbortSignal) => Promise<void> {
  return cacheRun(db, log, clock, {
    component: 'price-blocks',
    task: 'price-blocks-full',
    build: buildPriceBlocks,
    batch: opts.batchProducts ?? BLOCK_BATCH_PRODUCTS,
    recentMs: RECENT_MS,
    analyze: { table: 'price_blocks', afterRows: opts.analyzeAfterRows ?? ANALYZE_AFTER_ROWS },
  });
}

/** A product's spans are built while its trends were read within this long. */
export const SPANS_READ_WITHIN_MS = 7 * DAY_MS;

/**
 * The periodic build (a task of src/jobs/tasks.ts), for the products whose trends this process
 * answered in the last week (./reads.ts): their missing spans of today's UTC midnight (read
 * first today, or spans a late observation dropped), then of tomorrow's, which hold only days
 * that have ended by today's, so they are ready when the day turns. SPAN_BATCH_PRODUCTS a
 * transaction; a batch with nothing to build is one query. An aborted `signal` ends the run after
 * the batch in progress.
 */
export function spansRun(
  db: Database,
  log: Logger,
  clock: Clock,
  opts: { batchProducts?: number; analyzeAfterRows?: number } = {},
): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const now = clock.now();
    const ids = productsReadSince(now - SPANS_READ_WITHIN_MS);
    const batch = opts.batchProducts ?? SPAN_BATCH_PRODUCTS;
    const today = utcMidnight(now);
    for (const d1 of [today, new Date(today.getTime() + DAY_MS)]) {
      let rows = 0;
      for (let i = 0; i < ids.length && !signal.aborted; i += batch) {
        const some = ids.slice(i, i + batch);
        rows += await db.transaction((tx) => buildPriceSpans(tx, some, d1));
      }
      log.info({ component: 'price-spans', products: ids.length, rows, d1: d1.toISOString() }, 'price spans built');
      if (rows >= (opts.analyzeAfterRows ?? ANALYZE_AFTER_ROWS)) await analyzePriceSpans(db);
      if (signal.aborted) return;
    }
  };
}
