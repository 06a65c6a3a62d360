import type { Database } from '../../db/types.js';
import { nextSeries, nextWindow, rollupWindow, type SeriesKey } from './sql.js';
import { DAY_MS, hourStart } from '../../time.js';

export type { SeriesKey } from './sql.js';

/** Observations per transaction: each batch is one short statement on at most about this many rows. */
export const ROLLUP_BATCH_ROWS = 5000;
const SERIES_PAGE = 100;

export interface RollupOptions {
  /** Observations older than this many days (counted back from now to a whole UTC hour) are rolled up. */
  olderThanDays: number;
  /** Continue after this series (a previous call's `next`). */
  after?: SeriesKey | undefined;
  /** Only hours from this instant on; default: all of the series' history. */
  since?: Date | undefined;
  /** Stop after the series in progress once this many ms have passed; `next` says where to go on. */
  budgetMs?: number;
  now?: number;
  /** Checked between batches: true ends the run early (a process shutting down). */
  stop?: () => boolean;
}

export interface RollupResult {
  cutoff: string;
  series: number;
  deleted: number;
  updated: number;
  /** Where to continue; null when every series is done. */
  next: SeriesKey | null;
}

/** The instant before which hours are rolled up: `days` ago, down to the whole UTC hour. */
export function rollupCutoff(days: number, now = Date.now()): Date {
  const t = now - days * DAY_MS;
  return new Date(hourStart(t));
}

/**
 * Rolls up old observations series by series, each in batches of whole UTC hours, each batch
 * its own short transaction (docs/prices/HISTORY.md, "Retention").
 */
export async function rollupPrices(db: Database, opts: RollupOptions): Promise<RollupResult> {
  const started = Date.now();
  const cutoff = rollupCutoff(opts.olderThanDays, opts.now);
  const since = opts.since ?? new Date(0);
  const out: RollupResult = { cutoff: cutoff.toISOString(), series: 0, deleted: 0, updated: 0, next: null };
  let after = opts.after;
  for (;;) {
    const page = await nextSeries(db, after, cutoff, SERIES_PAGE);
    for (const key of page) {
      let from = since;
      for (;;) {
        const w = await nextWindow(db, key, from, cutoff, ROLLUP_BATCH_ROWS);
        if (!w || opts.stop?.()) break;
        const r = await db.transaction((tx) => rollupWindow(tx, key, w.lo, w.hi));
        out.deleted += r.deleted;
        out.updated += r.updated;
        from = w.hi;
      }
      out.series++;
      after = key;
      if (opts.stop?.()) return { ...out, next: key };
      if (opts.budgetMs !== undefined && Date.now() - started >= opts.budgetMs) {
        out.next = key;
        return out;
      }
    }
    if (page.length < SERIES_PAGE) return out;
  }
}
