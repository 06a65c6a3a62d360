import type { Queryable } from '../../db/types.js';
import { convertedSql, rateJoin } from '../../money/convert.js';
import { positionSql } from '../../position/sql.js';
import { daysAggregates } from './days.js';

/**
 * The trends of one product in ONE statement (docs/prices/TRENDS.md): the latest price of each
 * series from price_series, and the movement and per-series statistics from the daily
 * aggregates with the raw rows of the ranges' edges (source `days`, ./days.ts), or from every
 * observation of the product in one pass (source `raw`, the reference the tests compare with).
 * The benchmark runs this very SQL directly (`trendsQuery`).
 *
 * Every "now" is the statement's now() (or the instant given), so all windows of one answer
 * share one instant.
 */

/** The ranges of the per-series statistics, in days. */
export const RANGES = [30, 90, 180, 365] as const;
/** The periods of the changes: key in the answer -> SQL interval. */
export const PERIODS = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' } as const;
export type Period = keyof typeof PERIODS;

const periodKeys = Object.keys(PERIODS) as Period[];

/**
 * The statement's edge days as days before the UTC midnight d1 of its instant: the ranges' start
 * days and the periods' days (an instant within day d1 less whole days lies that many days
 * before it). The spans (migrations/0027) are cut between them.
 */
export const EDGE_DAYS: readonly number[] = [
  ...new Set([
    ...RANGES,
    ...Object.values(PERIODS).map((p) => {
      const [n, unit] = p.split(' ') as [string, string];
      const days = unit === 'days' ? Number(n) : Number(n) / 24;
      if (!Number.isInteger(days)) throw new Error(`a period of whole days expected: ${p}`);
      return days;
    }),
  ]),
].sort((a, b) => a - b);
const col = (p: Period) => `p${p}`;

/**
 * Per range: the time-weighted average, lowest, highest, observations, out-of-stock share.
 * Durations are exact: instants are bigint microseconds since the epoch (o.tu, o.uu, o.ntu,
 * o.nu), so a duration is an exact integer, and the weighted sums are numeric. Sums of exact
 * values do not depend on the order they are added in, so the same figures summed per day
 * (docs/prices/TRENDS.md, "Trends from aggregates") give the same answer to the last digit.
 */
function rangeAggregates(days: number): string {
  const start = `(o.nu - ${days * 86_400_000_000})`;
  // Held in the range: the observation's price still held at its start or came later.
  const heldIn = `(o.ntu is null or o.ntu > ${start})`;
  // The part of the observation's span [t, u) inside [start, now], in microseconds.
  const dur = `greatest(0, o.uu - greatest(o.tu, ${start}))`;
  const priced = `${heldIn} and o.priced`;
  return `round(coalesce(sum(o.mean_price * ${dur}) filter (where ${priced}) / nullif(sum(${dur}) filter (where ${priced}), 0),
                         avg(o.mean_price) filter (where ${priced})), 4)::text as avg_${days},
          min(array[o.price::float8, -o.t]) filter (where ${priced})::text[] as low_${days},
          max(array[o.price::float8, o.t]) filter (where ${priced})::text[] as high_${days},
          coalesce(sum(o.samples) filter (where o.tu > ${start} and o.tu <= o.nu), 0)::bigint as n_${days},
          round(coalesce(sum(${dur}) filter (where ${heldIn} and o.in_stock = false), 0)
                / nullif(sum(${dur}) filter (where ${heldIn} and o.in_stock is not null), 0), 4)::text as oos_${days}`;
}

/** Per period: the series' price at now - period (the latest observation at or before it). */
function periodAggregates(p: Period): string {
  const at = `o.now_at - interval '${PERIODS[p]}'`;
  const then = `o.observed_at <= ${at} and (o.next_at is null or o.next_at > ${at})`;
  return `min(o.price) filter (where ${then}) as ${col(p)}_price, min(o.currency) filter (where ${then}) as ${col(p)}_currency`;
}

/** Per period: the price then, and the change since in amount and percent (same currency only). */
function periodColumns(p: Period): string {
  const c = col(p);
  const same = `a.${c}_currency = l.latest_currency`;
  return `a.${c}_price::text as ${c}_price, a.${c}_currency,
       case when ${same} then (l.latest_price - a.${c}_price)::text end as ${c}_amount,
       case when ${same} and a.${c}_price > 0 then round((l.latest_price - a.${c}_price) / a.${c}_price * 100, 2)::text end as ${c}_percent`;
}

/**
 * The per-series figures (CTE `a`) from every observation of the product, in one pass: the
 * computation the daily aggregates must equal (the tests compare them on random data).
 */
function rawAggregates(): string {
  return `-- Every observation of the product with the start of the next one of its series (its price
-- holds until then), in the index's order.
ob as (
  select coalesce(competitor_id, '') as series, observed_at, price, currency, in_stock, samples, price_sum,
         lead(observed_at) over (partition by competitor_id order by observed_at, id) as next_at
    from price_observations
   where product_id = $2 and account_id = $1
),
o as (
  select ob.*, l.competitor_id, l.latest_price, l.latest_currency, nw.at as now_at,
         -- Epoch seconds, only for the instants of {price, at} (observed_at has milliseconds).
         date_part('epoch', ob.observed_at) as t,
         -- Exact instants in microseconds for the durations: observed_at has milliseconds.
         round(date_part('epoch', ob.observed_at) * 1000)::bigint * 1000 as tu,
         least(coalesce(round(date_part('epoch', ob.next_at) * 1000)::bigint * 1000, nw.us), nw.us) as uu,
         round(date_part('epoch', ob.next_at) * 1000)::bigint * 1000 as ntu,
         nw.us as nu,
         coalesce(ob.price_sum / ob.samples, ob.price) as mean_price,
         ob.currency = l.latest_currency and ob.in_stock is not false as priced,
         -- l's rate is the one of the series' latest currency: only those observations convert.
         case when ob.currency = l.latest_currency then ${convertedSql('ob.price', 'l', 'ob.currency', '(select currency from p)')} end as converted
    from ob join l on l.series = ob.series cross join nw
),
a as (
  select o.series,
         min(array[o.price::float8, -o.t]) filter (where o.priced)::text[] as low_ever,
         max(array[o.price::float8, o.t]) filter (where o.priced)::text[] as high_ever,
         ${RANGES.map(rangeAggregates).join(',\n         ')},
         ${periodKeys.map(periodAggregates).join(',\n         ')},
         coalesce(max(o.next_at) filter (where o.price <> o.latest_price or o.currency <> o.latest_currency),
                  min(o.observed_at)) as price_since,
         max(coalesce(o.next_at, o.now_at)) filter (
           where o.competitor_id is not null and o.currency = o.latest_currency and o.in_stock is not false
             and o.converted < (select lowest from k)
         ) as cheaper_until
    from o
   group by o.series
)`;
}

/**
 * Where the per-series figures come from: `days`, the daily aggregates with the raw rows of the
 * range edges (the service's), or `raw`, every observation of the product (the reference).
 */
export type TrendsSource = 'days' | 'raw';

/**
 * `now`: the instant the answer is as of (tests ask at chosen instants); the statement's now()
 * when left out.
 */
export function trendsQuery(
  accountId: string,
  productId: string,
  opts: { now?: Date; source?: TrendsSource } = {},
): { text: string; values: unknown[] } {
  return { text: trendsText(opts.source ?? 'days'), values: [accountId, productId, opts.now?.toISOString() ?? null] };
}

/** The statement's text per source, built once: ~47 KB that took 0.12-0.2 ms to build a request. */
const texts = new Map<TrendsSource, string>();
function trendsText(source: TrendsSource): string {
  let text = texts.get(source);
  if (text === undefined) texts.set(source, (text = buildTrendsText(source)));
  return text;
}

function buildTrendsText(source: TrendsSource): string {
  return `/* trendsQuery */
with nw as (
  -- The answer's instant, and the same in microseconds since the epoch (exact: now() has microseconds).
  select n.at, (extract(epoch from n.at) * 1000000)::bigint as us from (select coalesce($3::timestamptz, now()) as at) n
),
p as (
  select id, account_id, currency, base_price from products where id = $2 and account_id = $1
),
-- Each series' latest observation, in the product's currency where a rate allows.
l as (
  select s.competitor_id, coalesce(s.competitor_id, '') as series, c.name as competitor_name,
         s.latest_price, s.latest_currency, s.latest_in_stock, s.latest_observed_at, s.latest_listing_id, s.first_observed_at,
         fx.rate, fx.inverse,
         ${convertedSql('s.latest_price', 'fx', 's.latest_currency', 'p.currency')} as converted
    from p
    join price_series s on s.product_id = p.id
    left join competitors c on c.id = s.competitor_id
    ${rateJoin('fx', 'p.account_id', 's.latest_currency', 'p.currency')}
   where s.latest_observed_at is not null
),
-- The product's position (src/position): the comparison of the competitors' latest prices.
k as (
  select pos.* from p cross join lateral ${positionSql('p')} pos
),
${source === 'days' ? daysAggregates(RANGES, PERIODS) : rawAggregates()}
select p.id as product_id, p.currency as product_currency, p.base_price::text as base_price, nw.at as as_of,
       k.compared, k.left_out_of_stock, k.left_no_rate, k.in_stock, k.out_of_stock, k.stock_unknown,
       k.lowest::text as lowest, k.average::text as average, k.highest::text as highest, k.cheapest_id, k.cheapest_tied,
       k.rank, k.price_index::text as price_index, k.own_price::text as own_price,
       l.competitor_id, l.competitor_name, l.latest_price::text as latest_price, l.latest_currency, l.latest_in_stock,
       l.latest_observed_at, l.latest_listing_id, l.first_observed_at, l.converted::text as converted,
       a.series, a.low_ever, a.high_ever, a.price_since, a.cheaper_until,
       ${RANGES.map((d) => ['avg', 'low', 'high', 'n', 'oos'].map((x) => `a.${x}_${d}`).join(', ')).join(',\n       ')},
       ${periodKeys.map(periodColumns).join(',\n       ')}
  from p cross join k cross join nw
  left join l on true
  left join a on a.series = l.series
 order by l.competitor_id nulls first`;
}

export interface TrendsRow {
  product_id: string;
  product_currency: string;
  base_price: string;
  as_of: Date;
  compared: number;
  left_out_of_stock: number;
  left_no_rate: number;
  in_stock: number;
  out_of_stock: number;
  stock_unknown: number;
  lowest: string | null;
  average: string | null;
  highest: string | null;
  cheapest_id: string | null;
  cheapest_tied: number;
  rank: number | null;
  price_index: string | null;
  /** Our price in the product's currency (series' latest converted, else base_price); null without a rate. */
  own_price: string | null;
  /** The series' columns: all null on the one row of a product without any observation. */
  competitor_id: string | null;
  competitor_name: string | null;
  latest_price: string | null;
  latest_currency: string | null;
  latest_in_stock: boolean | null;
  latest_observed_at: Date | null;
  latest_listing_id: string | null;
  first_observed_at: Date | null;
  converted: string | null;
  series: string | null;
  low_ever: string[] | null;
  high_ever: string[] | null;
  price_since: Date | null;
  cheaper_until: Date | null;
  [range: `${'avg' | 'oos'}_${number}`]: string | null;
  [extreme: `${'low' | 'high'}_${number}`]: string[] | null;
  [count: `n_${number}`]: number | string;
  [then: `p${string}_${'price' | 'currency' | 'amount' | 'percent'}`]: string | null;
}

/** The rows of `trendsQuery`: one per series, own first; none when the product is not in the account. */
export async function queryTrends(db: Queryable, accountId: string, productId: string): Promise<TrendsRow[]> {
  const q = trendsQuery(accountId, productId);
  return (await db.query<TrendsRow>(q.text, q.values)).rows;
}
