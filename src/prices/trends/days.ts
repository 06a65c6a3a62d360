import { convertedSql } from '../../money/convert.js';

/**
 * The per-series figures of the trends statement (the CTE `a` of trendsQuery) from the daily
 * aggregates (price_days, migrations/0017 and 0018) and only the edges from the raw rows
 * (docs/prices/TRENDS.md, "Trends from aggregates"). Exactly the raw computation's answer:
 *
 * A range [start, now] is cut at UTC midnights: the edge A = [start, d0) where d0 is the first
 * midnight after start, the whole days B = [d0, d1) where d1 is today's midnight, and the edge
 * C = [d1, now] (with whatever was observed after now). An observation's span [t, next) is cut
 * the same way: its part inside its own day is in its day row (priced_us, priced_sum, oos_us,
 * known_us), the part past its day's end up to the next day with observations is the day's
 * carry (held by the day's last observation: close_in_stock, close_mean), and the edges are
 * computed from the raw rows of A and C plus the observation before each. Every duration is an
 * exact bigint of microseconds and every weighted sum numeric, so the pieces add up to the raw
 * statement's sums to the last digit.
 *
 * Expects the CTEs nw (at, us, day), p, l and k of trendsQuery and its parameters $1 (account),
 * $2 (product).
 */

const US = (x: string) => `(round(date_part('epoch', ${x}) * 1000)::bigint * 1000)`;

/** The observations of series `s` (l.series: '' for ours) matching `where`, optionally ordered and limited. */
function seriesRows(s: string, where: string, tail = ''): string {
  return `(select * from (
             (select o.* from price_observations o
               where o.product_id = $2 and o.account_id = $1 and o.competitor_id = ${s} and ${s} <> '' and ${where} ${tail})
             union all
             (select o.* from price_observations o
               where o.product_id = $2 and o.account_id = $1 and o.competitor_id is null and ${s} = '' and ${where} ${tail})
           ) u ${tail})`;
}

/**
 * The latest (`max`) or first (`min`) instant of series `s` matching `where`: a scalar subquery
 * per branch, each a single-table min/max the planner answers with one index probe per partition
 * (an `order by observed_at, id ... limit 1` over the partitions sorts every earlier row instead).
 */
function instant(s: string, agg: 'max' | 'min', where: string): string {
  return `${agg === 'max' ? 'greatest' : 'least'}(
    (select ${agg}(o.observed_at) from price_observations o
      where o.product_id = $2 and o.account_id = $1 and o.competitor_id = ${s} and ${s} <> '' and ${where}),
    (select ${agg}(o.observed_at) from price_observations o
      where o.product_id = $2 and o.account_id = $1 and o.competitor_id is null and ${s} = '' and ${where}))`;
}

/**
 * How far from an instant the nearest observation is looked for first. Within it the probe reads
 * the one or two monthly partitions the window touches (pruned while the statement runs); a
 * series not observed in it is looked for in every partition. A monitored series is observed
 * hourly to daily, so nearly every probe stays in the window.
 */
const NEAR = `interval '3 days'`;

/** The latest observation of series `s` before (`<`) or at (`<=`) an instant, by (observed_at, id). */
function lastRow(s: string, op: '<' | '<=', at: string): string {
  const where = `o.observed_at ${op} ${at}`;
  const latest = `coalesce(${instant(s, 'max', `${where} and o.observed_at >= ${at} - ${NEAR}`)}, ${instant(s, 'max', where)})`;
  return seriesRows(s, `o.observed_at = ${latest}`, 'order by id desc limit 1');
}

/** The instant of the observation after (observed_at, id) = (at, id) in series `s`. */
function nextInstant(s: string, at: string, id: string): string {
  const after = `o.observed_at > ${at}`;
  return `coalesce(${instant(s, 'min', `o.observed_at = ${at} and o.id > ${id}`)},
                   ${instant(s, 'min', `${after} and o.observed_at <= ${at} + ${NEAR}`)}, ${instant(s, 'min', after)})`;
}

/** The price held at an instant: the latest observation at or before it. */
function periodLateral(key: string, interval: string): string {
  return `left join lateral (
    select x.price, x.currency from ${lastRow('l.series', '<=', `nw.at - interval '${interval}'`)} x
  ) ${key} on true`;
}

/** One range's figures from its pieces (`w` below). */
function rangeLateral(days: number): string {
  const r = `r${days}`;
  return `cross join lateral (
    select round(coalesce(sum(x.w) / nullif(sum(x.us), 0), sum(x.m) / nullif(sum(x.c), 0)), 4)::text as avg_${days},
           min(x.lo)::text[] as low_${days}, max(x.hi)::text[] as high_${days},
           coalesce(sum(x.n), 0)::bigint as n_${days},
           round(coalesce(sum(x.oos), 0) / nullif(sum(x.known), 0), 4)::text as oos_${days}
      from ps x where x.series = l.series and x.range = ${days}
  ) ${r}`;
}

export function daysAggregates(ranges: readonly number[], periods: Record<string, string>): string {
  const rangeValues = ranges.map((d) => `(${d})`).join(', ');
  const periodKeys = Object.keys(periods);
  const priced = (cur: string, stock: string) => `${cur} = l.latest_currency and ${stock} is not false`;
  return `-- The product's day rows, all of its history (one per series, currency and UTC day).
dy as (
  select d.* from price_days d where d.product_id = $2 and d.account_id = $1
),
-- One per series and day: the day's first observation, and its last one (any currency), which
-- holds from the day's end to the next day's first observation (the carry).
-- (One sort of the rows, not three ordered aggregates sorting each day on its own.)
dg as (
  select distinct on (d.series, d.day) d.series, d.day,
         min(d.open_at) over (partition by d.series, d.day) as open_at,
         d.currency as close_currency, d.close_in_stock, d.close_mean
    from dy d order by d.series, d.day, d.close_at desc, d.close_id desc
),
dc as (
  select dg.*, ${US(`dg.day + interval '24 hours'`)} as from_us,
         ${US('lead(dg.open_at) over (partition by dg.series order by dg.day)')} as to_us
    from dg
),
-- The ranges: start (exact), d0 the first UTC midnight after it, d1 today's UTC midnight.
rg as (
  select v.d as range, nw.us - v.d * 86400000000 as start_us,
         nw.at - make_interval(hours => v.d * 24) as start_at,
         date_trunc('day', nw.at - make_interval(hours => v.d * 24), 'UTC') + interval '24 hours' as d0,
         ${US(`date_trunc('day', nw.at - make_interval(hours => v.d * 24), 'UTC') + interval '24 hours'`)} as d0_us,
         date_trunc('day', nw.at, 'UTC') as d1, ${US(`date_trunc('day', nw.at, 'UTC')`)} as d1_us, nw.us as now_us
    from nw cross join (values ${rangeValues}) v (d)
),
-- Edge A of each range: the observations of [start, d0) and the one before start, with the next
-- one's instant among them (past the last one, d0: the span is cut there).
ea as (
  select l.series, rg.range, rg.start_us, rg.d0_us, x.pred, x.price, x.currency, x.in_stock, x.samples,
         coalesce(x.price_sum / x.samples, x.price) as mean,
         date_part('epoch', x.observed_at) as t, ${US('x.observed_at')} as tu,
         coalesce(${US('lead(x.observed_at) over (partition by l.series, rg.range order by x.observed_at, x.id)')}, rg.d0_us) as nu
    from l cross join rg cross join lateral (
      select false as pred, y.* from ${seriesRows('l.series', 'o.observed_at >= rg.start_at and o.observed_at < rg.d0')} y
      union all
      select true, y.* from ${lastRow('l.series', '<', 'rg.start_at')} y
    ) x
),
-- Edge C: the observations from today's midnight on and the one before it.
ec as (
  select l.series, x.pred, x.price, x.currency, x.in_stock, x.samples, x.observed_at,
         coalesce(x.price_sum / x.samples, x.price) as mean,
         date_part('epoch', x.observed_at) as t, ${US('x.observed_at')} as tu,
         lead(x.observed_at) over (partition by l.series order by x.observed_at, x.id) as next_at,
         ${US('lead(x.observed_at) over (partition by l.series order by x.observed_at, x.id)')} as nu
    from l cross join nw cross join lateral (
      select false as pred, y.* from ${seriesRows('l.series', `o.observed_at >= date_trunc('day', nw.at, 'UTC')`)} y
      union all
      select true, y.* from ${lastRow('l.series', '<', `date_trunc('day', nw.at, 'UTC')`)} y
    ) x
),
-- The pieces of every range: (priced microseconds, their weighted sum, priced count and sum of
-- means, lowest and highest priced pairs, observations, microseconds out of stock and known).
pc as (
  -- A: held in the range when its next observation is after start.
  select e.series, e.range,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then h.dur end as us,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then e.mean * h.dur end as w,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then 1 end as c,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then e.mean end as m,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then array[e.price::float8, -e.t] end as lo,
         case when h.held and ${priced('e.currency', 'e.in_stock')} then array[e.price::float8, e.t] end as hi,
         case when not e.pred and e.tu > e.start_us then e.samples end as n,
         case when h.held and e.in_stock = false then h.dur end as oos,
         case when h.held and e.in_stock is not null then h.dur end as known
    from ea e join l on l.series = e.series
    cross join lateral (select e.nu > e.start_us as held,
                               greatest(0, least(e.nu, e.d0_us) - greatest(e.tu, e.start_us)) as dur) h
  union all
  -- C: in every range; the observation before today counts only its time since midnight.
  select e.series, rg.range,
         case when ${priced('e.currency', 'e.in_stock')} and (not e.pred or h.dur > 0) then h.dur end,
         case when ${priced('e.currency', 'e.in_stock')} and (not e.pred or h.dur > 0) then e.mean * h.dur end,
         case when ${priced('e.currency', 'e.in_stock')} and not e.pred then 1 end,
         case when ${priced('e.currency', 'e.in_stock')} and not e.pred then e.mean end,
         case when ${priced('e.currency', 'e.in_stock')} and not e.pred then array[e.price::float8, -e.t] end,
         case when ${priced('e.currency', 'e.in_stock')} and not e.pred then array[e.price::float8, e.t] end,
         case when not e.pred and e.tu <= rg.now_us then e.samples end,
         case when e.in_stock = false then h.dur end,
         case when e.in_stock is not null then h.dur end
    from ec e join l on l.series = e.series cross join rg
    cross join lateral (select greatest(0, least(coalesce(e.nu, rg.now_us), rg.now_us) - greatest(e.tu, rg.d1_us)) as dur) h
  union all
  -- B: the whole days' rows.
  select d.series, rg.range,
         case when d.currency = l.latest_currency then d.priced_us end,
         case when d.currency = l.latest_currency then d.priced_sum end,
         case when d.currency = l.latest_currency then d.priced_n end,
         case when d.currency = l.latest_currency then d.priced_means end,
         case when d.currency = l.latest_currency and d.low is not null then array[d.low::float8, -date_part('epoch', d.low_at)] end,
         case when d.currency = l.latest_currency and d.high is not null then array[d.high::float8, date_part('epoch', d.high_at)] end,
         d.count, d.oos_us, d.known_us
    from dy d join l on l.series = d.series join rg on d.day >= rg.d0 and d.day < rg.d1
  union all
  -- B: the carries, the part of [day end, next day's first observation) inside [d0, d1).
  select c.series, rg.range,
         case when ${priced('c.close_currency', 'c.close_in_stock')} then h.dur end,
         case when ${priced('c.close_currency', 'c.close_in_stock')} then c.close_mean * h.dur end,
         null, null, null, null, null,
         case when c.close_in_stock = false then h.dur end,
         case when c.close_in_stock is not null then h.dur end
    from dc c join l on l.series = c.series cross join rg
    cross join lateral (select least(coalesce(c.to_us, rg.d1_us), rg.d1_us) - greatest(c.from_us, rg.d0_us) as dur) h
   where h.dur > 0
),
-- The pieces summed per series and range in one pass (sums of exact sums: the same figures), so
-- each range's lateral reads one row, not every piece of every series (44 scans of ~16 000 rows
-- for a year hourly of 11 series).
ps as (
  select x.series, x.range, sum(x.us) as us, sum(x.w) as w, sum(x.c) as c, sum(x.m) as m, min(x.lo) as lo,
         max(x.hi) as hi, sum(x.n) as n, sum(x.oos) as oos, sum(x.known) as known
    from pc x group by x.series, x.range
),
a as (
  select l.series, ev.low_ever, ev.high_ever,
         ${ranges.map((d) => ['avg', 'low', 'high', 'n', 'oos'].map((x) => `r${d}.${x}_${d}`).join(', ')).join(',\n         ')},
         ${periodKeys.map((k) => `p${k}.price as p${k}_price, p${k}.currency as p${k}_currency`).join(',\n         ')},
         coalesce(sn.observed_at, ev.first_at) as price_since,
         case when cx.observed_at is not null then
           coalesce(cn.observed_at, greatest(nw.at, (
             select max(e.next_at) from ec e
              where e.series = l.series and e.next_at > nw.at and ${priced('e.currency', 'e.in_stock')}
                and ${convertedSql('e.price', 'l', 'e.currency', '(select currency from p)')} < (select lowest from k))))
         end as cheaper_until
    from l cross join nw
    cross join lateral (
      select min(array[d.low::float8, -date_part('epoch', d.low_at)]) filter (where d.currency = l.latest_currency and d.low is not null)::text[] as low_ever,
             max(array[d.high::float8, date_part('epoch', d.high_at)]) filter (where d.currency = l.latest_currency and d.high is not null)::text[] as high_ever,
             min(d.open_at) as first_at
        from dy d where d.series = l.series
    ) ev
    ${ranges.map(rangeLateral).join('\n    ')}
    ${periodKeys.map((k) => periodLateral(`p${k}`, periods[k]!)).join('\n    ')}
    -- price_since: the next observation after the latest one at another price or currency, found
    -- in the latest day not all at the current price.
    left join lateral (
      select max(d.day) as day from dy d
       where d.series = l.series and (d.currency <> l.latest_currency or d.min <> l.latest_price or d.max <> l.latest_price)
    ) sd on true
    left join lateral (
      select x.observed_at, x.id from ${seriesRows(
        'l.series',
        `o.observed_at >= sd.day and o.observed_at < sd.day + interval '24 hours' and (o.price <> l.latest_price or o.currency <> l.latest_currency)`,
        'order by observed_at desc, id desc limit 1',
      )} x
    ) sx on true
    left join lateral (select ${nextInstant('l.series', 'sx.observed_at', 'sx.id')} as observed_at) sn on true
    -- cheaper_until: the latest priced observation of a competitor converting below today's
    -- lowest, found in the latest day whose priced minimum does (conversion is monotonic).
    left join lateral (
      select max(d.day) as day from dy d
       where d.series = l.series and l.competitor_id is not null and d.currency = l.latest_currency
         and ${convertedSql('d.priced_min', 'l', 'd.currency', '(select currency from p)')} < (select lowest from k)
    ) cd on true
    left join lateral (
      select x.observed_at, x.id from ${seriesRows(
        'l.series',
        `o.observed_at >= cd.day and o.observed_at < cd.day + interval '24 hours' and o.currency = l.latest_currency
         and o.in_stock is not false
         and ${convertedSql('o.price', 'l', 'o.currency', '(select currency from p)')} < (select lowest from k)`,
        'order by observed_at desc, id desc limit 1',
      )} x
    ) cx on true
    left join lateral (select ${nextInstant('l.series', 'cx.observed_at', 'cx.id')} as observed_at) cn on true
   -- As the raw computation: only series with observations.
   where ev.first_at is not null
)`;
}
