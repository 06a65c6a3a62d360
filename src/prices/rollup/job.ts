import type { Logger } from 'pino';
import type { Database } from '../../db/types.js';
import { rollupCutoff, rollupPrices } from './index.js';

const EVERY_MS = 60 * 60_000;
const FIRST_AFTER_MS = 60_000;
/** Later runs look this far behind the previous cutoff, for observations that arrived late. */
const LATE_SLACK_MS = 2 * 86_400_000;

/**
 * The periodic roll-up (PRICE_ROLLUP_AFTER_DAYS): a minute after start, then hourly. The first
 * run reads the whole history before the cutoff; later ones only what came since the previous
 * cutoff (with slack for late arrivals). Several processes may run it: a batch locks its series.
 * Returns the function that stops it.
 */
export function startRollupJob(db: Database, days: number | undefined, log: Logger): () => Promise<void> {
  if (days === undefined) return async () => {};
  let since: Date | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    const cutoff = rollupCutoff(days);
    running = rollupPrices(db, { olderThanDays: days, since, stop: () => stopped })
      .then((r) => {
        since = new Date(cutoff.getTime() - LATE_SLACK_MS);
        log.info({ component: 'price-rollup', ...r, next: undefined }, 'price roll-up done');
      })
      .catch((err: unknown) => log.warn({ err, component: 'price-rollup' }, 'price roll-up failed; will retry'))
      .finally(() => (running = undefined));
  };
  const first = setTimeout(run, FIRST_AFTER_MS);
  const timer = setInterval(run, EVERY_MS);
  first.unref();
  timer.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
