import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { DAY_MS } from '../../time.js';
import { buildAllPriceBlocks } from './blocks.js';

/** A run looks this far back for blocks to build: the blocks ended since, and those late data dropped. */
const RECENT_MS = 10 * DAY_MS;
/** Every this many runs (and the first), a run looks at the whole history (blocks the roll-up or old late data dropped). */
const FULL_EVERY = 168;

/**
 * The periodic build of the trends' blocks of whole days (migrations/0022, docs/prices/TRENDS.md
 * "Blocks"): every product's missing blocks that ended before today's UTC midnight, in short
 * transactions of a few products. Only a cache: the trends read the day rows of a block without
 * its rows. Any number of processes may run it (a block is built by one statement; a second
 * one finds it built). An aborted `signal` ends the run after the batch in progress.
 */
export function blocksRun(db: Database, log: Logger, clock: Clock): (signal: AbortSignal) => Promise<void> {
  let runs = 0;
  return async (signal) => {
    const now = clock.now();
    const since = runs++ % FULL_EVERY === 0 ? undefined : new Date(now - RECENT_MS);
    const r = await buildAllPriceBlocks(db, { before: new Date(now), since, stop: () => signal.aborted });
    log.info({ component: 'price-blocks', ...r, since: since?.toISOString() ?? null }, 'price blocks built');
  };
}
