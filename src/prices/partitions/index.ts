import type { Database } from '../../db/types.js';
import { dropRangesBefore, type EnsureResult, ensurePartitions, type Range } from '../../db/partitions.js';
import { DAY_MS, hourStart } from '../../time.js';
import { deleteLocalDaysReaching, deleteObservationsBefore, deleteSpansBefore, OBSERVATION_PARTITIONS } from './sql.js';

export { monthOf, type MonthPartition, OBSERVATION_PARTITIONS } from './sql.js';

/** Months created ahead of the current one (docs/PRICES.md, "Partitions"). */
export const MONTHS_AHEAD = OBSERVATION_PARTITIONS.ahead;
/** Rows per statement of the row-wise deletes of retention (the edge month, the default partition). */
export const RETENTION_BATCH_ROWS = 5000;

/**
 * Creates the current month and the MONTHS_AHEAD after it when missing, and a month for any
 * month (within ten years back) whose observations sit in the default partition
 * (src/db/partitions.ts: each month in its own short transaction under an advisory lock, so any
 * number of processes can run it at once). Idempotent.
 */
export function ensureObservationPartitions(
  db: Database,
  now = new Date(),
  monthsAhead = MONTHS_AHEAD,
): Promise<EnsureResult> {
  return ensurePartitions(db, OBSERVATION_PARTITIONS, now, monthsAhead);
}

export interface RetentionResult {
  cutoff: string;
  /** Whole months detached and dropped. */
  dropped: string[];
  /** Observations deleted row by row (the month the cutoff falls in, the default partition). */
  deleted: number;
}

/** The instant before which observations go: `days` ago, down to the whole UTC hour. */
export function retentionCutoff(days: number, now = Date.now()): Date {
  return new Date(hourStart(now - days * DAY_MS));
}

/**
 * Removes the observations observed before `cutoff`: every month wholly before it is detached
 * (a catalogue change whatever its size, in a short transaction holding the tables) and then
 * dropped (a transaction of its own, holding nothing a request uses: src/db/partitions.ts
 * `dropRangesBefore`); `onDetached` is told each month as it leaves the tables. The rows of
 * the month the cutoff falls in and of the default partition go in batches of `batchRows`, each
 * its own short statement. `stop` is checked between batches.
 */
export async function dropObservationsBefore(
  db: Database,
  cutoff: Date,
  opts: { batchRows?: number; stop?: () => boolean; onDetached?: (r: Range) => void } = {},
): Promise<RetentionResult> {
  const out: RetentionResult = { cutoff: cutoff.toISOString(), dropped: [], deleted: 0 };
  const stop = opts.stop;
  const dropped = await dropRangesBefore(db, OBSERVATION_PARTITIONS, cutoff, {
    ...(stop ? { stop } : {}),
    beforeDrop: (tx, r) => deleteLocalDaysReaching(tx, r.from),
    ...(opts.onDetached ? { onDetached: opts.onDetached } : {}),
  });
  out.dropped = dropped.map((suffix) => `price_observations_${suffix}`);
  const batch = opts.batchRows ?? RETENTION_BATCH_ROWS;
  // The trends' spans built from day rows before the cutoff's day, which no longer exist: a
  // detached month's (row-wise deletes drop theirs by trigger). After the detach, not in the
  // transaction holding the tables; on every run, so one a stop or crash left goes next time.
  for (;;) {
    if (opts.stop?.()) return out;
    if ((await deleteSpansBefore(db, new Date(Math.floor(cutoff.getTime() / DAY_MS) * DAY_MS), batch)) === 0) break;
  }
  for (;;) {
    if (opts.stop?.()) return out;
    const n = await deleteObservationsBefore(db, cutoff, batch);
    out.deleted += n;
    if (n < batch) return out;
  }
}
