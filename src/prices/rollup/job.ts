import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../time.js';
import { rollupCutoff, rollupPrices } from './index.js';

/** Later runs look this far behind the previous cutoff, for observations that arrived late. */
const LATE_SLACK_MS = 2 * 86_400_000;

/**
 * The periodic roll-up (PRICE_ROLLUP_AFTER_DAYS), one run per call; src/jobs/tasks.ts says when
 * it runs. The first run reads the whole history before the cutoff; later ones only what came
 * since the previous cutoff (with slack for late arrivals). Several processes may run it: a
 * batch locks its series. An aborted `signal` ends the run after the batch in progress.
 */
export function rollupRun(
  db: Database,
  days: number,
  log: Logger,
  clock: Clock,
): (signal: AbortSignal) => Promise<void> {
  let since: Date | undefined;
  return async (signal) => {
    const now = clock.now();
    const cutoff = rollupCutoff(days, now);
    const r = await rollupPrices(db, { olderThanDays: days, since, now, stop: () => signal.aborted });
    since = new Date(cutoff.getTime() - LATE_SLACK_MS);
    log.info({ component: 'price-rollup', ...r, next: undefined }, 'price roll-up done');
  };
}
