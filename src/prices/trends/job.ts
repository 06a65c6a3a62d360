import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { DAY_MS } from '../../time.js';
import { ANALYZE_AFTER_ROWS, cacheRun } from '../passes.js';
import { BLOCK_BATCH_PRODUCTS, buildPriceBlocks } from './blocks.js';

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
