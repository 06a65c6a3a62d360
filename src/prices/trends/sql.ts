import type { Queryable } from '../../db/types.js';
import { convertedSql, rateJoin } from '../../money/convert.js';
import { positionSql } from '../../position/sql.js';

/**
 * The trends of one product in ONE statement (docs/prices/TRENDS.md): the latest price of each
 * series from price_series, and one pass over the product's observations in the order of
 * price_observations_series_time (product_id, competitor_id, observed_at) for the movement and
 * the per-series statistics. The benchmark runs this very SQL directly (`trendsQuery`).
 *
 * Every "now" is the statement's now(), so all windows of one answer share one instant.
 */

/** The ranges of the per-series statistics, in days. */
export const RANGES = [30, 90, 180, 365] as const;
/** The periods of the changes: key in the answer -> SQL interval. */
export const PERIODS = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' } as const;
export type Period = keyof typeof PERIODS;

const periodKeys = Object.keys(PERIODS) as Period[];
const col = (p: Period) => `p${p}`;

/**
 * Per range: the time-weighted average, lowest, highest, observations, out-of-stock share.
 * Times are epoch seconds in double precision (o.t, o.u, o.nt, o.n): a duration needs no more,
 * and float arithmetic is cheaper than numeric over ~40 aggregates a row. Prices stay exact
 * except in the weighted sum of the average, which is rounded to 4 decimals.
 */
function rangeAggregates(days: number): string {
  const start = `(o.n - ${days * 86_400})`;
  // Held in the range: the observation's price still held at its start or came later.
  const heldIn = `(o.nt is null or o.nt > ${start})`;
  // The part of the observation's span [t, u) inside [start, now], in seconds.
  const dur = `greatest(0, o.u - greatest(o.t, ${start}))`;
  const priced = `${heldIn} and o.priced`;
  return `round(coalesce(sum(o.mean_price * ${dur}) filter (where ${priced}) / nullif(sum(${dur}) filter (where ${priced}), 0),
                         avg(o.mean_price) filter (where ${priced}))::numeric, 4)::text as avg_${days},
          min(array[o.price::float8, -o.t]) filter (where ${priced})::text[] as low_${days},
          max(array[o.price::float8, o.t]) filter (where ${priced})::text[] as high_${days},
          coalesce(sum(o.samples) filter (where o.t > ${start} and o.t <= o.n), 0)::bigint as n_${days},
          round((coalesce(sum(${dur}) filter (where ${heldIn} and o.in_stock = false), 0)
                / nullif(sum(${dur}) filter (where ${heldIn} and o.in_stock is not null), 0))::numeric, 4)::text as oos_${days}`;
}

/** Per period: the series' price at now - period (the latest observation at or before it). */
function periodAggregates(p: Period): string {
  const at = `now() - interval '${PERIODS[p]}'`;
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

export function trendsQuery(accountId: string, productId: string): { text: string; values: unknown[] } {
  const text = `/* trendsQuery */
with p as (
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
-- Every observation of the product with the start of the next one of its series (its price
-- holds until then), in the index's order.
ob as (
  select coalesce(competitor_id, '') as series, observed_at, price, currency, in_stock, samples, price_sum,
         lead(observed_at) over (partition by competitor_id order by observed_at, id) as next_at
    from price_observations
   where product_id = $2 and account_id = $1
),
o as (
  select ob.*, l.competitor_id, l.latest_price, l.latest_currency,
         date_part('epoch', ob.observed_at) as t,
         date_part('epoch', least(coalesce(ob.next_at, now()), now())) as u,
         date_part('epoch', ob.next_at) as nt,
         date_part('epoch', now()) as n,
         coalesce(ob.price_sum / ob.samples, ob.price)::float8 as mean_price,
         ob.currency = l.latest_currency and ob.in_stock is not false as priced,
         -- l's rate is the one of the series' latest currency: only those observations convert.
         case when ob.currency = l.latest_currency then ${convertedSql('ob.price', 'l', 'ob.currency', '(select currency from p)')} end as converted
    from ob join l on l.series = ob.series
),
a as (
  select o.series,
         min(array[o.price::float8, -o.t]) filter (where o.priced)::text[] as low_ever,
         max(array[o.price::float8, o.t]) filter (where o.priced)::text[] as high_ever,
         ${RANGES.map(rangeAggregates).join(',\n         ')},
         ${periodKeys.map(periodAggregates).join(',\n         ')},
         coalesce(max(o.next_at) filter (where o.price <> o.latest_price or o.currency <> o.latest_currency),
                  min(o.observed_at)) as price_since,
         max(coalesce(o.next_at, now())) filter (
           where o.competitor_id is not null and o.currency = o.latest_currency and o.in_stock is not false
             and o.converted < (select lowest from k)
         ) as cheaper_until
    from o
   group by o.series
)
select p.id as product_id, p.currency as product_currency, p.base_price::text as base_price, now() as as_of,
       k.compared, k.left_out_of_stock, k.left_no_rate, k.in_stock, k.out_of_stock, k.stock_unknown,
       k.lowest::text as lowest, k.average::text as average, k.highest::text as highest, k.cheapest_id, k.cheapest_tied,
       k.rank, k.price_index::text as price_index, k.own_price::text as own_price,
       l.competitor_id, l.competitor_name, l.latest_price::text as latest_price, l.latest_currency, l.latest_in_stock,
       l.latest_observed_at, l.latest_listing_id, l.first_observed_at, l.converted::text as converted,
       a.series, a.low_ever, a.high_ever, a.price_since, a.cheaper_until,
       ${RANGES.map((d) => ['avg', 'low', 'high', 'n', 'oos'].map((x) => `a.${x}_${d}`).join(', ')).join(',\n       ')},
       ${periodKeys.map(periodColumns).join(',\n       ')}
  from p cross join k
  left join l on true
  left join a on a.series = l.series
 order by l.competitor_id nulls first`;
  return { text, values: [accountId, productId] };
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
