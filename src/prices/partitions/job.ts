import type { Logger } from 'pino';
import { type Clock, systemClock } from '../../time.js';
import type { Database } from '../../db/types.js';
import { dropObservationsBefore, retentionCutoff } from './index.js';
import { packClosedMonths } from './pack.js';

/**
 * The periodic retention of observations (PRICE_RETENTION_DAYS): whole months past it are
 * dropped, the month the cutoff falls in is deleted from in short batches. An aborted `signal`
 * ends the run after the batch in progress.
 */
export function retentionRun(
  db: Database,
  days: number,
  log: Logger,
  clock: Clock = systemClock,
): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const r = await dropObservationsBefore(db, retentionCutoff(days, clock.now()), { stop: () => signal.aborted });
    log.info({ component: 'price-retention', ...r }, 'price retention done');
  };
}

/**
 * The periodic packing of closed months (PRICE_PACK_AFTER_DAYS, src/prices/partitions/pack.ts).
 * An aborted `signal` ends the run after the partition in progress.
 */
export function packRun(
  db: Database,
  afterDays: number,
  log: Logger,
  clock: Clock = systemClock,
): (signal: AbortSignal) => Promise<void> {
  return async (signal) => {
    const packed = await packClosedMonths(db, new Date(clock.now()), afterDays, () => signal.aborted);
    for (const p of packed) log.info({ component: 'price-pack', ...p }, 'price month packed');
  };
}
