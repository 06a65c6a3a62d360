import type { Logger } from 'pino';
import { type Clock, systemClock } from '../../time.js';
import type { Database } from '../../db/types.js';
import { dropObservationsBefore, ensureObservationPartitions, retentionCutoff } from './index.js';

/**
 * The periodic creation of observation partitions ahead of time (src/jobs/tasks.ts says when):
 * the current month and the three after it, and a month for observations found in the default
 * partition. Any number of processes may run it at once (an advisory lock per month created).
 */
export function partitionsRun(db: Database, log: Logger): () => Promise<void> {
  return async () => {
    const r = await ensureObservationPartitions(db);
    if (r.created.length > 0) log.info({ component: 'observation-partitions', ...r }, 'observation partitions created');
  };
}

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
