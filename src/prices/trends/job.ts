import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { DAY_MS } from '../../time.js';
import { BLOCK_BATCH_PRODUCTS, buildAllPriceBlocks, fullPass, fullPassDue } from './blocks.js';

/** A run looks this far back for blocks to build: the blocks ended since, and those late data dropped. */
const RECENT_MS = 10 * DAY_MS;

/**
 * The periodic build of the trends' blocks of whole days (migrations/0022, docs/prices/TRENDS.md
 * "Blocks"): every product's missing blocks that ended before today's UTC midnight, in short
 * transactions of a few products. Only a cache: the trends read the day rows of a block without
 * its rows. Any number of processes may run it (a block is built by one statement; a second
 * one finds it built). An aborted `signal` ends the run after the batch in progress.
 *
 * A run looks at the last 10 days, or continues the pass over the whole history when one is due
 * (a week after the last one finished, by task_passes: not on every process start, ~10 ms a
 * product with nothing to build) or in progress (resumed from its cursor after a restart).
 */
export function blocksRun(
  db: Database,
  log: Logger,
  clock: Clock,
  opts: { batchProducts?: number; analyzeAfterRows?: number } = {},
): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const now = clock.now();
    const stop = () => signal.aborted;
    if (await fullPassDue(db, now)) {
      const r = await fullPass(db, now, opts.batchProducts ?? BLOCK_BATCH_PRODUCTS, stop, opts.analyzeAfterRows);
      log.info({ component: 'price-blocks', ...r, since: null }, 'price blocks built');
      return;
    }
    const since = new Date(now - RECENT_MS);
    const r = await buildAllPriceBlocks(db, { before: new Date(now), since, stop, batchProducts: opts.batchProducts });
    log.info({ component: 'price-blocks', ...r, since: since.toISOString() }, 'price blocks built');
  };
}
