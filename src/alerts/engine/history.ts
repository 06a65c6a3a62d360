import type { Queryable } from '../../db/types.js';
import type { ExchangeRates } from '../../money/convert.js';
import {
  type Cursor,
  type HistoryScope,
  loadFirstArrivalAfter,
  loadNames,
  loadPreviousBefore,
  loadScopeSeries,
  loadSeriesPage,
  type PreviousRow,
  type SeriesKey,
  type StoredRow,
} from './history-sql.js';
import { seriesLows } from './lows.js';
import type { ObservationPoint } from './point.js';
import { loadLowInputs, type LowSeries } from './sql.js';

/**
 * The stored observations of a scope as the points live evaluation judged when each arrived
 * (POST /alerts/preview): the same previous price, "late" flag and lows (the change sequence
 * is left null: the caller asks loadSequences for those of the points that fired). A
 * series' arrival order is its ids (src/prices/series-lock.ts), so this is a replay: visiting
 * a series' observations by id, the newest seen so far is each one's previous observation, and
 * one newer than it makes it late.
 *
 * Read in bounded pages, all series a page at a time, so the embedded engine serves other
 * requests between them and the work can stop: at the deadline, after a page (what was read
 * through an instant every series reached is replayed, and the answer says so), or when the
 * signal aborts (the client went away: nothing more is read).
 */

/** Rows of one page; a page reads at most this many per series of up to GROUP series. */
const PAGE_ROWS = 2000;
const GROUP = 100;
const MIN_PER_SERIES = 50;

export interface ReplayOptions {
  /** Points allowed; more: `exceeded`. */
  limit: number;
  /** Only this listing's observations are points (the rest of their series is read all the same). */
  listingId: string | null;
  /** Numbers of days of lowest_in_days to compute; empty: none. */
  windows: readonly number[];
  rates: ExchangeRates;
  /** Date.now() after which no more pages are read. */
  deadline: number;
  signal?: AbortSignal | undefined;
  /** Counts the observations read. */
  progress?: { observations: number } | undefined;
}

export type Replay =
  | { exceeded: true }
  | {
      exceeded: false;
      /** In time order. */
      points: ObservationPoint[];
      /** The points are those observed before this instant: `to`, or earlier when the deadline cut the reading short. */
      through: Date;
      complete: boolean;
    };

interface SeriesRead extends SeriesKey {
  after: Cursor;
  rows: StoredRow[];
  done: boolean;
}

/** Lets the event loop serve other requests between slices of work. */
export const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function* groups<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += GROUP) yield items.slice(i, i + GROUP);
}

const newer = (a: { observed_at: Date; id: number }, b: { observed_at: Date; id: number }) =>
  a.observed_at.getTime() > b.observed_at.getTime() ||
  (a.observed_at.getTime() === b.observed_at.getTime() && a.id > b.id);

export async function replayStoredPoints(
  db: Queryable,
  accountId: string,
  scope: HistoryScope,
  opts: ReplayOptions,
): Promise<Replay> {
  const series: SeriesRead[] = (await loadScopeSeries(db, accountId, scope)).map((k) => ({
    ...k,
    after: { at: scope.from, id: 0 },
    rows: [],
    done: false,
  }));
  let points = 0;
  let complete = true;
  reading: for (;;) {
    const open = series.filter((s) => !s.done);
    if (open.length === 0) break;
    for (const group of groups(open)) {
      opts.signal?.throwIfAborted();
      const limit = Math.max(MIN_PER_SERIES, Math.floor(PAGE_ROWS / group.length));
      const page = await loadSeriesPage(db, group, scope.to, limit);
      if (opts.progress) opts.progress.observations += page.length;
      const counts = group.map(() => 0);
      for (const row of page) {
        const s = group[row.n]!;
        s.rows.push(row);
        s.after = { at: row.observed_at, id: row.id };
        counts[row.n]!++;
        if (opts.listingId === null || row.listing_id === opts.listingId) points++;
      }
      group.forEach((s, n) => {
        if (counts[n]! < limit) s.done = true;
      });
      if (points > opts.limit) return { exceeded: true };
      // At the deadline the reading stops (after at least a page: a preview always gets somewhere).
      if (Date.now() >= opts.deadline && series.some((s) => !s.done)) {
        complete = false;
        break reading;
      }
    }
  }
  opts.signal?.throwIfAborted();
  const through = complete
    ? scope.to
    : new Date(Math.min(...series.filter((s) => !s.done).map((s) => s.after.at.getTime())));

  // What is still unread of each series: everything after its cursor (past `to` for one read to the end).
  const firstAfter: (number | null)[] = [];
  for (const group of groups(series)) {
    firstAfter.push(
      ...(await loadFirstArrivalAfter(
        db,
        group.map((s) => ({ ...s, after: s.done ? { at: scope.to, id: 0 } : s.after })),
      )),
    );
  }
  const withRows = series.map((s, n) => ({ s, n })).filter(({ s }) => s.rows.length > 0);
  const previous: (PreviousRow | null)[] = series.map(() => null);
  for (const group of groups(withRows)) {
    const found = await loadPreviousBefore(
      db,
      group.map(({ s }) => ({ ...s, first_id: s.rows.reduce((m, r) => Math.min(m, r.id), Infinity) })),
      scope.from,
    );
    group.forEach(({ n }, i) => (previous[n] = found[i]!));
  }

  const names = await loadNames(
    db,
    accountId,
    [...new Set(series.map((s) => s.product_id))],
    [...new Set(series.flatMap((s) => (s.competitor_id ? [s.competitor_id] : [])))],
  );
  const bySeries: ObservationPoint[][] = [];
  for (const [n, s] of series.entries()) {
    const own: ObservationPoint[] = [];
    const product = names.products.get(s.product_id);
    let newest: StoredRow | null = null;
    let seen = 0;
    for (const row of [...s.rows].sort((a, b) => a.id - b.id)) {
      if (++seen % PAGE_ROWS === 0) await turn();
      const first = firstAfter[n];
      const late = (first !== null && first !== undefined && row.id > first) || (newest !== null && newer(newest, row));
      const before = newest ?? previous[n];
      if (newest === null || newer(row, newest)) newest = row;
      if (
        row.observed_at.getTime() >= through.getTime() ||
        (opts.listingId !== null && row.listing_id !== opts.listingId) ||
        !product
      )
        continue;
      own.push({
        kind: 'observation',
        observation_id: row.id,
        product_id: s.product_id,
        competitor_id: s.competitor_id,
        listing_id: row.listing_id,
        price: row.price,
        currency: row.currency,
        in_stock: row.in_stock,
        observed_at: row.observed_at,
        source: row.source,
        product_name: product.name,
        product_currency: product.currency,
        competitor_name: s.competitor_id === null ? null : (names.competitors.get(s.competitor_id) ?? null),
        previous: before
          ? {
              price: before.price,
              currency: before.currency,
              in_stock: before.in_stock,
              observed_at: before.observed_at,
            }
          : null,
        sequence: null,
        late,
      });
    }
    bySeries.push(own);
  }

  if (opts.windows.length > 0) await attachLows(db, accountId, series, bySeries, scope.from, opts);
  const all =
    bySeries.length === 1
      ? bySeries[0]!
      : bySeries
          .flat()
          .sort((a, b) => a.observed_at.getTime() - b.observed_at.getTime() || a.observation_id - b.observation_id);
  return { exceeded: false, points: all, through, complete };
}

/** The lows of the points that are not late: from the rows read (the range) and what lies before it (loadLowInputs). */
async function attachLows(
  db: Queryable,
  accountId: string,
  series: readonly SeriesRead[],
  bySeries: ObservationPoint[][],
  from: Date,
  opts: ReplayOptions,
): Promise<void> {
  const wanted = series
    .map((s, n) => ({ s, targets: bySeries[n]!.filter((p) => !p.late) }))
    .filter((x) => x.targets.length > 0);
  for (const group of groups(wanted)) {
    const inputs = await loadLowInputs(
      db,
      accountId,
      group.map(({ s, targets }): LowSeries => ({
        product_id: s.product_id,
        competitor_id: s.competitor_id,
        t1: targets.reduce((m, p) => (p.observed_at < m ? p.observed_at : m), targets[0]!.observed_at),
        tk: targets.reduce((m, p) => (p.observed_at > m ? p.observed_at : m), targets[0]!.observed_at),
        first_id: targets.reduce((m, p) => Math.min(m, p.observation_id), Infinity),
        currencies: [...new Set(targets.map((p) => p.currency))],
      })),
      opts.windows,
      from,
    );
    for (const [i, { s, targets }] of group.entries()) {
      const { rows, shared } = inputs[i]!;
      for (const r of s.rows)
        rows.push({ id: r.id, at: r.observed_at.getTime(), price: r.price, currency: r.currency });
      const lows = await seriesLows(
        rows,
        targets.map((p) => ({ id: p.observation_id, at: p.observed_at.getTime(), currency: p.currency })),
        opts.windows,
        opts.rates,
        shared,
      );
      for (const p of targets) p.lows = lows.get(p.observation_id);
    }
  }
}
