import { dropRangesBefore, type PartitionSet } from '../db/partitions.js';
import type { Database } from '../db/types.js';
import { deleteDefaultDeliveriesBefore, deleteDefaultEventsBefore, deletePendingMailsBefore } from './sql.js';

/**
 * events and webhook_deliveries, partitioned by UTC day of the event's created_at
 * (migrations/0016, docs/EVENTS.md "Retention"): a day of events and that day's deliveries are
 * created together and dropped together, deliveries first.
 */
export const EVENT_PARTITIONS: PartitionSet = {
  name: 'events',
  unit: 'day',
  tables: [
    { table: 'events', column: 'created_at' },
    { table: 'webhook_deliveries', column: 'event_created_at' },
  ],
  // A week ahead: the task runs hourly, so days are there long before their first event.
  ahead: 7,
  // Events of the last 400 days found in a default partition get their day.
  back: 400,
  lock: 7_245_127,
};

/** Rows per statement of the row-wise deletes (the default partitions only). */
export const PRUNE_BATCH = 1000;

export interface PruneResult {
  cutoff: string;
  /** Days dropped whole (pYYYYMMDD), events and deliveries. */
  dropped: string[];
  /** Events deleted row by row from the default partition. */
  deleted: number;
}

/**
 * Retention of events (and their deliveries and waiting mails) created before `cutoff`: every
 * day wholly before it is detached and dropped, one transaction per day; the day the cutoff
 * falls in is kept whole until it is wholly past (so an event is kept at least the retention
 * and at most a day longer); rows in the default partitions go row by row, PRUNE_BATCH per
 * statement. `stop` is checked between steps.
 */
export async function dropEventsBefore(
  db: Database,
  cutoff: Date,
  opts: { stop?: () => boolean; batchRows?: number } = {},
): Promise<PruneResult> {
  const stop = opts.stop ?? (() => false);
  const dropped = await dropRangesBefore(db, EVENT_PARTITIONS, cutoff, {
    stop,
    beforeDrop: (tx, r) => deletePendingMailsBefore(tx, r.to),
  });
  const out: PruneResult = { cutoff: cutoff.toISOString(), dropped, deleted: 0 };
  const batch = opts.batchRows ?? PRUNE_BATCH;
  for (;;) {
    if (stop()) return out;
    const n = await deleteDefaultEventsBefore(db, cutoff, batch);
    out.deleted += n;
    if (n < batch) break;
  }
  while (!stop() && (await deleteDefaultDeliveriesBefore(db, cutoff, batch)) === batch);
  return out;
}
