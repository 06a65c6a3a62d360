import type { Database } from '../../db/types.js';
import { DAY_MS, hourStart } from '../../time.js';
import {
  createMonth,
  createMonthFromDefault,
  defaultHoldsMonth,
  deleteObservationsBefore,
  dropMonth,
  listMonthPartitions,
  lockPartitions,
  type MonthPartition,
  monthAfter,
  monthOf,
  monthsInDefault,
} from './sql.js';

export { monthOf, type MonthPartition } from './sql.js';

/** Months created ahead of the current one (docs/PRICES.md, "Partitions"). */
export const MONTHS_AHEAD = 3;
/** How far back the default partition's rows are given months of their own. */
const MONTHS_BACK = 120;
/** Rows per statement of the row-wise deletes of retention (the edge month, the default partition). */
export const RETENTION_BATCH_ROWS = 5000;

export interface EnsureResult {
  created: string[];
  /** Observations moved out of the default partition into a month of their own. */
  moved: number;
}

/**
 * Creates the current month and the MONTHS_AHEAD after it when missing, and a month for any
 * month (within ten years back) whose observations sit in the default partition. Each month in
 * its own short transaction under an advisory lock, so any number of processes can run it at
 * once: the second finds the month made. Idempotent.
 */
export async function ensureObservationPartitions(
  db: Database,
  now = new Date(),
  monthsAhead = MONTHS_AHEAD,
): Promise<EnsureResult> {
  const out: EnsureResult = { created: [], moved: 0 };
  const existing = new Set((await listMonthPartitions(db)).map((m) => m.name));
  const wanted = new Map<string, MonthPartition>();
  for (let i = 0; i <= monthsAhead; i++) {
    const m = monthAfter(now, i);
    wanted.set(m.name, m);
  }
  for (const t of await monthsInDefault(
    db,
    monthAfter(now, -MONTHS_BACK).from,
    monthAfter(now, monthsAhead + 1).from,
  )) {
    const m = monthOf(t);
    wanted.set(m.name, m);
  }
  for (const m of [...wanted.values()].sort((a, b) => a.from.getTime() - b.from.getTime())) {
    if (existing.has(m.name)) continue;
    const made = await db.transaction(async (tx) => {
      await lockPartitions(tx);
      if ((await listMonthPartitions(tx)).some((p) => p.name === m.name)) return undefined;
      if (await defaultHoldsMonth(tx, m)) return { moved: await createMonthFromDefault(tx, m) };
      await createMonth(tx, m);
      return { moved: 0 };
    });
    if (made) {
      out.created.push(m.name);
      out.moved += made.moved;
    }
  }
  return out;
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
 * and dropped (each in its own transaction, a catalogue change whatever its size); the rows of
 * the month the cutoff falls in and of the default partition go in batches of `batchRows`, each
 * its own short statement. `stop` is checked between batches.
 */
export async function dropObservationsBefore(
  db: Database,
  cutoff: Date,
  opts: { batchRows?: number; stop?: () => boolean } = {},
): Promise<RetentionResult> {
  const out: RetentionResult = { cutoff: cutoff.toISOString(), dropped: [], deleted: 0 };
  for (const m of await listMonthPartitions(db)) {
    if (m.to.getTime() > cutoff.getTime()) break;
    if (opts.stop?.()) return out;
    const done = await db.transaction(async (tx) => {
      await lockPartitions(tx);
      if (!(await listMonthPartitions(tx)).some((p) => p.name === m.name)) return false;
      await dropMonth(tx, m);
      return true;
    });
    if (done) out.dropped.push(m.name);
  }
  const batch = opts.batchRows ?? RETENTION_BATCH_ROWS;
  for (;;) {
    if (opts.stop?.()) return out;
    const n = await deleteObservationsBefore(db, cutoff, batch);
    out.deleted += n;
    if (n < batch) return out;
  }
}
