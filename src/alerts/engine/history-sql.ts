import type { Queryable } from '../../db/types.js';
import { inSeries } from './sql.js';

/**
 * Statements of the replay of stored observations (history.ts, for POST /alerts/preview): each
 * reads a bounded page, so the embedded engine serves other requests between them.
 */

export interface SeriesKey {
  product_id: string;
  competitor_id: string | null;
}

export interface HistoryScope {
  product_id: string | null;
  competitor_id: string | null;
  /** true: our own series only; false: competitors' only; null: both. */
  own: boolean | null;
  from: Date;
  to: Date;
}

/** The series of the scope that hold observations in [from, to), in key order. */
export async function loadScopeSeries(db: Queryable, accountId: string, s: HistoryScope): Promise<SeriesKey[]> {
  const r = await db.query<SeriesKey>(
    `/* loadPreviewSeries */
     select product_id, competitor_id from price_series
      where account_id = $1 and ($2::text is null or product_id = $2) and ($3::text is null or competitor_id = $3)
        and ($4::boolean is null or (competitor_id is null) = $4)
        and first_observed_at < $6 and latest_observed_at >= $5
      order by product_id, competitor_id nulls first`,
    [accountId, s.product_id, s.competitor_id, s.own, s.from.toISOString(), s.to.toISOString()],
  );
  return r.rows;
}

export interface StoredRow {
  id: number;
  listing_id: string | null;
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
  source: string;
}

/** Where a series' reading stopped: after the observation (at, id). */
export interface Cursor {
  at: Date;
  id: number;
}

/**
 * The next observations in [from, to) of each series after its cursor, in time order, at most
 * `limit` per series; the rows come with their series' index in `series`.
 */
export async function loadSeriesPage(
  db: Queryable,
  series: readonly (SeriesKey & { after: Cursor })[],
  to: Date,
  limit: number,
): Promise<(StoredRow & { n: number })[]> {
  const r = await db.query<StoredRow & { n: number }>(
    `/* loadPreviewRows */
     select s.n, r.*
       from unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::int[]) as s (product_id, competitor_id, after_at, after_id, n)
       cross join lateral ${inSeries(
         'x.id, x.listing_id, x.price::text as price, x.currency, x.in_stock, x.observed_at, x.source',
         'x.observed_at >= s.after_at and (x.observed_at, x.id) > (s.after_at, s.after_id) and x.observed_at < $6',
         'order by x.observed_at, x.id limit $7',
         's',
       )} r`,
    [
      series.map((s) => s.product_id),
      series.map((s) => s.competitor_id),
      series.map((s) => s.after.at.toISOString()),
      series.map((s) => s.after.id),
      series.map((_, n) => n),
      to.toISOString(),
      limit,
    ],
  );
  return r.rows.map((x) => ({ ...x, n: Number(x.n), id: Number(x.id) }));
}

/**
 * For each series, the smallest id among its observations after `after` (any time later, past
 * the range too): an observation read with a larger id arrived after a newer one, so it is late.
 */
export async function loadFirstArrivalAfter(
  db: Queryable,
  series: readonly (SeriesKey & { after: Cursor })[],
): Promise<(number | null)[]> {
  const r = await db.query<{ n: number; first_id: number | null }>(
    `/* loadPreviewArrivalAfter */
     select s.n, (select min(r.id) from ${inSeries('x.id', 'x.observed_at >= s.after_at and (x.observed_at, x.id) > (s.after_at, s.after_id)', '', 's')} r) as first_id
       from unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::int[]) as s (product_id, competitor_id, after_at, after_id, n)`,
    [
      series.map((s) => s.product_id),
      series.map((s) => s.competitor_id),
      series.map((s) => s.after.at.toISOString()),
      series.map((s) => s.after.id),
      series.map((_, n) => n),
    ],
  );
  const out: (number | null)[] = series.map(() => null);
  for (const x of r.rows) out[Number(x.n)] = x.first_id === null ? null : Number(x.first_id);
  return out;
}

export interface PreviousRow {
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
}

/** For each series, its newest observation before `from` among those recorded before `first_id` (the first of the range to arrive). */
export async function loadPreviousBefore(
  db: Queryable,
  series: readonly (SeriesKey & { first_id: number })[],
  from: Date,
): Promise<(PreviousRow | null)[]> {
  const r = await db.query<PreviousRow & { n: number }>(
    `/* loadPreviewPrevious */
     select s.n, r.*
       from unnest($1::text[], $2::text[], $3::bigint[], $4::int[]) as s (product_id, competitor_id, first_id, n)
       cross join lateral ${inSeries(
         'x.price::text as price, x.currency, x.in_stock, x.observed_at',
         'x.observed_at < $5 and x.id < s.first_id',
         'order by x.observed_at desc, x.id desc limit 1',
         's',
       )} r`,
    [
      series.map((s) => s.product_id),
      series.map((s) => s.competitor_id),
      series.map((s) => s.first_id),
      series.map((_, n) => n),
      from.toISOString(),
    ],
  );
  const out: (PreviousRow | null)[] = series.map(() => null);
  for (const x of r.rows)
    out[Number(x.n)] = { price: x.price, currency: x.currency, in_stock: x.in_stock, observed_at: x.observed_at };
  return out;
}

/** The names a point's message needs: products (with their currency) and competitors, by id. */
export async function loadNames(
  db: Queryable,
  accountId: string,
  productIds: readonly string[],
  competitorIds: readonly string[],
): Promise<{ products: Map<string, { name: string; currency: string }>; competitors: Map<string, string> }> {
  const r = await db.query<{ kind: 'p' | 'c'; id: string; name: string; currency: string | null }>(
    `/* loadPreviewNames */
     select 'p' as kind, id, name, currency from products where account_id = $1 and id = any($2::text[])
     union all
     select 'c', id, name, null from competitors where account_id = $1 and id = any($3::text[])`,
    [accountId, productIds, competitorIds],
  );
  const products = new Map<string, { name: string; currency: string }>();
  const competitors = new Map<string, string>();
  for (const x of r.rows) {
    if (x.kind === 'p') products.set(x.id, { name: x.name, currency: x.currency! });
    else competitors.set(x.id, x.name);
  }
  return { products, competitors };
}

/** The change sequence of each observation (of `ids`) that changed its series. */
export async function loadSequences(db: Queryable, ids: readonly number[]): Promise<Map<number, number>> {
  const r = await db.query<{ observation_id: number; sequence: number }>(
    `/* loadPreviewSequences */ select observation_id, sequence from price_changes where observation_id = any($1::bigint[])`,
    [ids],
  );
  return new Map(r.rows.map((x) => [Number(x.observation_id), Number(x.sequence)]));
}
