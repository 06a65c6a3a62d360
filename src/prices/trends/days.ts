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
 * carry (held by the day's last observation), kept on that next day's opening row (prev_day,
 * prev_currency, prev_in_stock, prev_mean: migrations/0021), and the edges are
 * computed from the raw rows of A and C plus the observation before each. Every duration is an
 * exact bigint of microseconds and every weighted sum numeric, so the pieces add up to the raw
 * statement's sums to the last digit.
 *
 * The cost is one pass over the product's day rows, in no order, and one index scan per series
 * and day read; whole blocks of days (a fixed week of a UTC month, migrations/0022) are read from
 * their rows in price_blocks instead of their day rows when the product has them and they lie
 * in one band with no edge day, and the spans of the answer's midnight (the days between its
 * edge days, migrations/0027) instead of both when it has those (`sp`, `bk`, `gp`):
 * - the day rows are aggregated once per series into bands (the ranges nest and end at d1, so a
 *   day is added to one band and a range sums its bands): whole days, the carries they hold
 *   (cut at the bands' bounds when days without observations take one across), lowest/highest
 *   ever, the latest days price_since and cheaper_until start from, and the latest day before
 *   each edge's;
 * - the observation before an edge (a range's start, today's midnight, a period's instant) is
 *   the last raw row before it in the edge's own day, read anyway, else the closing row of the
 *   latest earlier day row (any currency, `pr`: a probe of that day's rows by the key), which
 *   also holds the carry up to d1 when no day row follows it;
 * - the raw rows come from one lateral over (series, day) pairs (`rw`): one reference to
 *   price_observations, so a custom plan stays cheap to make (every reference is planned over
 *   every partition) and a generic one small to start.
 *
 * Expects the CTEs nw (at, us), p, l and k of trendsQuery and its parameters $1 (account),
 * $2 (product), $3 (the instant, or null for now()).
 */

const US = (x: string) => `(round(date_part('epoch', ${x}) * 1000)::bigint * 1000)`;
const day = (x: string) => `date_trunc('day', ${x}, 'UTC')`;
const hoursBefore = (at: string, days: number) => `${at} - interval '${days * 24} hours'`;
/** The first UTC midnight after a range's start, from the answer's instant `at`. */
const d0 = (at: string, days: number) => `${day(hoursBefore(at, days))} + interval '24 hours'`;

/** The observations of series `s` (l.series: '' for ours) matching `where`. */
function seriesRows(s: string, where: string): string {
  return `(select o.* from price_observations o
            where o.product_id = $2 and o.account_id = $1 and o.competitor_id = ${s} and ${s} <> '' and ${where}
           union all
           select o.* from price_observations o
            where o.product_id = $2 and o.account_id = $1 and o.competitor_id is null and ${s} = '' and ${where})`;
}

/** An edge row's columns (observed_at, id, price, currency, in_stock, samples, mean) of a raw row of `rw`. */
const raw = (r: string) =>
  `${r}.observed_at, ${r}.id, ${r}.price, ${r}.currency, ${r}.in_stock, ${r}.samples, ${r}.mean`;
/** The same from a closing day row of `pr` (its day's last observation). */
const closing = (c: string) =>
  `${c}.close_at, ${c}.close_id, ${c}.close, ${c}.currency, ${c}.close_in_stock, null::integer, ${c}.close_mean`;

/**
 * The bands of whole days: the ranges end at the same midnight d1 and nest, so [d0, d1) of the
 * i-th range (ascending) is the union of bands 0..i, band i being [d0 of range i, d0 of range
 * i - 1 or d1). A day row or a carry is summed into its band once, and a range adds its bands.
 */
const bandOf = (ranges: readonly number[], i: number) => ({
  lo: `b.d0_${ranges[i]}`,
  hi: i === 0 ? 'b.d1' : `b.d0_${ranges[i - 1]}`,
  loUs: `b.d0_us_${ranges[i]}`,
  hiUs: i === 0 ? 'b.d1_us' : `b.d0_us_${ranges[i - 1]}`,
});

/** One range's figures from the bands of its whole days (`sa`), of its carries (`sc`) and its edges (`pe`). */
function rangeColumns(ranges: readonly number[], i: number): string {
  const days = ranges[i]!;
  const r = `e${days}`;
  const bands = ranges.slice(0, i + 1).map((_, j) => j);
  const add = (x: string, withCarries: boolean) =>
    [
      `coalesce(${r}.${x}, 0)`,
      ...bands.map((j) => `coalesce(sa.${x}_${j}, 0)`),
      ...(withCarries ? bands.map((j) => `coalesce(sc.${x}_${j}, 0)`) : []),
    ].join(' + ');
  const pairs = (x: string) => [`${r}.${x}`, ...bands.map((j) => `sa.${x}_${j}`)].join(', ');
  return `round(coalesce((${add('w', true)}) / nullif(${add('us', true)}, 0), (${add('m', false)}) / nullif(${add('c', false)}, 0)), 4)::text as avg_${days},
         least(${pairs('lo')})::text[] as low_${days}, greatest(${pairs('hi')})::text[] as high_${days},
         (${add('n', false)})::bigint as n_${days},
         round((${add('oos', true)}) / nullif(${add('known', true)}, 0), 4)::text as oos_${days}`;
}

/** `x`'s sums of the columns `cols` per band (`x.band` the band of the row), for a per-series pivot. */
const byBand = (ranges: readonly number[], cols: string[], agg: (c: string) => string = (c) => `sum(x.${c})`) =>
  ranges
    .map((_, i) => cols.map((c) => `${agg(c)} filter (where x.band = ${i}) as ${c}_${i}`).join(', '))
    .join(',\n         ');

/**
 * The edges: each one's key, its range (A), the day whose raw rows it reads (a column of `bd`,
 * for the window `[day, day + 24 hours)`; C reads from today's midnight on), and the day before
 * which the closing day row stands for the observation before it.
 */
function edges(ranges: readonly number[], periods: Record<string, string>) {
  return [
    ...ranges.map((d) => ({ key: `a${d}`, range: String(d), day: `b.ds_${d}` })),
    { key: 'c', range: 'null::integer', day: 'b.d1' },
    ...Object.keys(periods).map((k) => ({ key: `p${k}`, range: 'null', day: `b.xd_${k}` })),
  ];
}

/** A carry's state: the columns of its currency, stock and mean price in `d`. */
interface Holder {
  cur: string;
  stock: string;
  mean: string;
}
/**
 * The carry held in a day row `d` (on the day's opening row: the previous day row's closing
 * state), when that previous day is not older than the series' oldest day row (`k_ok`):
 * retention detaches whole months and leaves the first day row after one pointing into it,
 * where the raw computation has no observation before the first one left. Null currency and stock count the carry nowhere.
 */
const carryIn = (d: string): Holder => ({
  cur: `case when ${d}.k_ok then ${d}.prev_currency end`,
  stock: `case when ${d}.k_ok then ${d}.prev_in_stock end`,
  mean: `${d}.prev_mean`,
});
/** The carry held by a closing row `c` of pr. */
const carryOut = (c: string): Holder => ({
  cur: `${c}.currency`,
  stock: `${c}.close_in_stock`,
  mean: `${c}.close_mean`,
});

/** A carry's four sums over `dur` microseconds (columns `k<x><suffix>`): priced time, its weighted sum, out of stock, known. */
function carrySums(h: Holder, dur: string, suffix: string, where = 'true'): string {
  const priced = `${where} and ${h.cur} = l.latest_currency and ${h.stock} is not false`;
  return [
    `sum(${dur}) filter (where ${priced}) as kus${suffix}`,
    `sum(${h.mean} * ${dur}) filter (where ${priced}) as kw${suffix}`,
    `sum(${dur}) filter (where ${where} and ${h.stock} = false) as koos${suffix}`,
    `sum(${dur}) filter (where ${where} and ${h.stock} is not null) as kknown${suffix}`,
  ].join(', ');
}

/** A carry [f, t) cut at the bands' bounds: its sums per band (`k<x>_<band>`). */
const carryBands = (ranges: readonly number[], h: Holder, f: string, t: string, where = 'true') =>
  ranges
    .map((_, i) => {
      const band = bandOf(ranges, i);
      return carrySums(h, `greatest(0, least(${t}, ${band.hiUs}) - greatest(${f}, ${band.loUs}))`, `_${i}`, where);
    })
    .join(',\n         ');

/** The columns of a block or span row (migrations/0022, 0027) the statement reads. */
const blockColumns = (k: string) =>
  [
    'series',
    'currency',
    'block',
    'block_end',
    'last_day',
    'priced_us',
    'priced_sum',
    'priced_n',
    'priced_means',
    'lo',
    'hi',
    'count',
    'oos_us',
    'known_us',
    'open_at',
    'min',
    'max',
    'priced_min',
    'prev_day',
    'prev_currency',
    'prev_in_stock',
    'prev_mean',
    'k_us',
    'k_sum',
    'k_oos',
    'k_known',
  ]
    .map((c) => `${k}.${c}`)
    .join(', ');

/** The columns of price_days the statement reads of a day row. */
const dayColumns = `d.series, d.currency, d.day, d.priced_us, d.priced_sum, d.priced_n, d.priced_means, d.low, d.low_at,
                         d.high, d.high_at, d.count, d.oos_us, d.known_us, d.open_at, d.min, d.max, d.priced_min,
                         d.prev_day, d.prev_currency, d.prev_in_stock, d.prev_mean`;

export function daysAggregates(ranges: readonly number[], periods: Record<string, string>): string {
  const periodKeys = Object.keys(periods);
  const priced = (cur: string, stock: string) => `${cur} = l.latest_currency and ${stock} is not false`;
  const lowest = '(select lowest from k)';
  const productCurrency = '(select currency from p)';
  const keys = edges(ranges, periods);
  // A day row's (or a block row's) prices not all the current one: price_since's day is the latest such.
  const notCurrent = (d: string) =>
    `${d}.currency <> l.latest_currency or ${d}.min <> l.latest_price or ${d}.max <> l.latest_price`;
  // A competitor's priced price converting below today's lowest (conversion is monotonic): cheaper_until's.
  const belowLowest = (d: string) =>
    `l.competitor_id is not null and ${d}.currency = l.latest_currency and ${convertedSql(`${d}.priced_min`, 'l', `${d}.currency`, productCurrency)} < ${lowest}`;
  // In a span row (migrations/0027), price_since's day without its day rows: the latest day not
  // all at the price of the span's closing run when that is the current price, else its last day.
  const spanCurrentSince = (d: string) =>
    `case when ${d}.currency = l.latest_currency and ${d}.run_price = l.latest_price then ${d}.pre_run_day else ${d}.last_day end`;
  // And cheaper_until's: the latest of the span's record lows (each below every later day's) that
  // converts below today's lowest is the latest day that does.
  const spanBelowLowest = (d: string) =>
    `(select max(r.day) from unnest(${d}.low_days, ${d}.low_mins) r (day, low)
       where ${convertedSql('r.low', 'l', `${d}.currency`, productCurrency)} < ${lowest})`;
  // The edge days no block read whole may hold (ranges' start days, periods' days; d1 on is never in one).
  const edgeDays = [...ranges.map((d) => `b.ds_${d}`), ...periodKeys.map((k) => `b.xd_${k}`)];
  const next = `lead(r.observed_at) over (partition by r.series order by r.observed_at, r.id)`;
  // A day row's band, grouped by as an xid: a type with a hash opclass and no btree one, so the
  // (generic) plan hashes the ~4 400 wide rows of a year without blocks instead of sorting them
  // when it expects a few, as it does from the range scans between blocks.
  const bandKey = `(case when d.day < b.d1 then case ${ranges.map((_, i) => `when d.day >= ${bandOf(ranges, i).lo} then ${i}`).join(' ')} end end)::text::xid`;
  return `-- The answer's bounds, once (date_trunc with a zone looks the zone up at every call): d1
-- today's UTC midnight; per range its start, the start's day ds and d0 the first midnight after
-- it; per period its instant x and that instant's day xd.
bd as (
  select ${day('nw.at')} as d1, ${US(day('nw.at'))} as d1_us,
         ${ranges.map((d) => `${day(hoursBefore('nw.at', d))} as ds_${d}, ${d0('nw.at', d)} as d0_${d}, ${US(d0('nw.at', d))} as d0_us_${d}`).join(',\n         ')},
         ${periodKeys.map((k) => `nw.at - interval '${periods[k]}' as x_${k}, ${day(`nw.at - interval '${periods[k]}'`)} as xd_${k}`).join(',\n         ')}
    from nw
),
-- Each series' oldest day row: a kept carry counts only when its previous day is not older
-- (k_ok: retention detaches whole months and leaves the next day row pointing into one).
fd as (
  select l.series, coalesce(
           -- Its first observation's day, unless retention or a delete took it (one partition).
           (select m.day from price_days m
             where m.product_id = $2 and m.account_id = $1 and m.series = l.series
               and m.day = ${day('l.first_observed_at')} limit 1),
           (select m.day from price_days m
             where m.product_id = $2 and m.account_id = $1 and m.series = l.series
             order by m.day limit 1)) as first_day
    from l
),
-- The blocks read whole (migrations/0022): the product's block rows of blocks that end by d1 and
-- hold none of the edge days (so each lies inside one band, and before or after every edge).
-- The product has rows for a block only when they are those of its day rows now (built for every
-- series at once, dropped with any change of a day row in it).
-- The spans of today's midnight (migrations/0027) are read instead of the blocks when the product
-- has them and each series' oldest day row is still the one they were built from (retention
-- detaching a month moves it); a span holds no edge day when it was cut for the same edges.
sp as (
  select k.* from price_spans k cross join bd b
   where k.product_id = $2 and k.account_id = $1 and k.d1 = b.d1
),
so as (
  select exists (select from sp) and not exists (
    select from sp k left join fd on fd.series = k.series where k.first_day is distinct from fd.first_day) as ok
),
bk as (
  select k.* from (
    select ${blockColumns('k')}, true as spn, k.run_price, k.pre_run_day, k.low_days, k.low_mins
      from sp k where (select so.ok from so)
    union all
    select ${blockColumns('k')}, false, null, null, null, null from price_blocks k
     where k.product_id = $2 and k.account_id = $1 and not (select so.ok from so)
  ) k cross join bd b
   where k.block_end <= b.d1
     and not (${edgeDays.map((e) => `(${e} >= k.block and ${e} < k.block_end)`).join(' or ')})
),
-- The spans of days read from the day rows: everything between the blocks read whole.
gp as (
  select g.lo, g.hi from (
    select coalesce(lag(u.block_end) over (order by u.block), '-infinity') as lo, u.block as hi
      from (select distinct k.block, k.block_end from bk k) u
    union all
    select coalesce(max(k.block_end), '-infinity'), 'infinity' from bk k
  ) g
   where g.lo < g.hi
),
-- The whole days per series and band (the block rows read whole and the day rows between them,
-- straight from their scans, in no order; a block row counts as the day rows it holds): the
-- sums of each band, lowest/highest, the first observation, the latest day with another price or
-- currency than the current one (price_since) and with a priced price below today's lowest
-- (cheaper_until), and the latest day before each edge's; and the carries the rows hold: each
-- [k_from, k_to) (the previous day row's end to this day's first observation, cut at d1) is
-- summed into the row's band as k_own, and only when it starts before that band (k_spill: days
-- without observations across a band's bound, or a row from d1 on) its part before is cut at
-- every band's bounds.
dg as (
  select d.series, ${bandKey}::text::int as band,
         sum(d.priced_us) filter (where d.currency = l.latest_currency) as us,
         sum(d.priced_sum) filter (where d.currency = l.latest_currency) as w,
         sum(d.priced_n) filter (where d.currency = l.latest_currency) as c,
         sum(d.priced_means) filter (where d.currency = l.latest_currency) as m,
         min(d.lo) filter (where d.currency = l.latest_currency) as lo,
         max(d.hi) filter (where d.currency = l.latest_currency) as hi,
         sum(d.count) as n, sum(d.oos_us) as oos, sum(d.known_us) as known, min(d.open_at) as first_at,
         max(d.day) filter (where d.day >= b.d1) as late_day,
         ${carrySums(carryIn('d'), 'd.k_own', '')},
         sum(d.i_us) filter (where d.currency = l.latest_currency) as ikus,
         sum(d.i_w) filter (where d.currency = l.latest_currency) as ikw,
         sum(d.i_oos) as ikoos, sum(d.i_known) as ikknown,
         ${carryBands(ranges, carryIn('d'), 'd.k_from', 'd.k_spill', 'd.k_spill > d.k_from')},
         greatest(max(d.day) filter (where not d.blk and (${notCurrent('d')})),
                  max(${spanCurrentSince('d')}) filter (where d.spn)) as sd_day,
         max(d.day) filter (where d.blk and not d.spn and (${notCurrent('d')})) as sd_blk,
         greatest(max(d.day) filter (where not d.blk and ${belowLowest('d')}),
                  max(${spanBelowLowest('d')}) filter (where d.spn and l.competitor_id is not null and d.currency = l.latest_currency)) as cd_day,
         max(d.day) filter (where d.blk and not d.spn and ${belowLowest('d')}) as cd_blk,
         ${keys.map((e) => `max(d.last_day) filter (where d.last_day < ${e.day}) as pd_${e.key}`).join(', ')}
    from (
      -- Each carry's bounds once per row (offset 0: not pulled up into every aggregate).
      select d.*, greatest(0, d.k_to - greatest(d.k_from, d.k_lo)) as k_own, least(d.k_to, coalesce(d.k_lo, d.k_end, d.k_from)) as k_spill
        from (
          select d.*, ${US(`d.prev_day + interval '24 hours'`)} as k_from, least(${US('d.open_at')}, b.d1_us) as k_to,
                 d.prev_day >= fd.first_day as k_ok,
                 case when d.day < b.d1 then case ${ranges.map((_, i) => `when d.day >= ${bandOf(ranges, i).lo} then ${bandOf(ranges, i).loUs}`).join(' ')} end end as k_lo,
                 case when d.day >= b.d1 then b.d1_us end as k_end
            from (
              select d.series, d.currency, d.day, d.day as last_day, false as blk, d.priced_us, d.priced_sum, d.priced_n, d.priced_means,
                     case when d.low is not null then array[d.low::float8, -date_part('epoch', d.low_at)] end as lo,
                     case when d.high is not null then array[d.high::float8, date_part('epoch', d.high_at)] end as hi,
                     d.count, d.oos_us, d.known_us, d.open_at, d.min, d.max, d.priced_min,
                     d.prev_day, d.prev_currency, d.prev_in_stock, d.prev_mean,
                     null::bigint as i_us, null::numeric as i_w, null::bigint as i_oos, null::bigint as i_known,
                     false as spn, null::numeric as run_price, null::timestamptz as pre_run_day,
                     null::timestamptz[] as low_days, null::numeric[] as low_mins
                from (
                  -- Without blocks, every day row of the product in one scan, as before the
                  -- blocks; with some, a range scan of the product's day rows per span (offset 0:
                  -- not flattened into a join that scans them all and filters). Each branch is
                  -- cut off before it runs by its one-time test of bk.
                  select ${dayColumns} from price_days d
                   where d.product_id = $2 and d.account_id = $1 and not exists (select from bk)
                  union all
                  select d.* from gp cross join lateral (
                    select ${dayColumns} from price_days d
                     where d.product_id = $2 and d.account_id = $1 and d.day >= gp.lo and d.day < gp.hi
                    offset 0) d
                   where exists (select from bk)
                ) d
              union all
              select k.series, k.currency, k.block, k.last_day, true, k.priced_us, k.priced_sum, k.priced_n, k.priced_means,
                     k.lo, k.hi, k.count, k.oos_us, k.known_us, k.open_at, k.min, k.max, k.priced_min,
                     k.prev_day, k.prev_currency, k.prev_in_stock, k.prev_mean, k.k_us, k.k_sum, k.k_oos, k.k_known,
                     k.spn, k.run_price, k.pre_run_day, k.low_days, k.low_mins
                from bk k
            ) d cross join bd b left join fd on fd.series = d.series
        ) d
      offset 0
    ) d join l on l.series = d.series cross join bd b
   group by 1, ${bandKey}
),
sg as (
  select x.series, min(x.lo)::text[] as low_ever, max(x.hi)::text[] as high_ever, min(x.first_at) as first_at,
         max(x.sd_day) as sd_days, max(x.sd_blk) as sd_blk, max(x.cd_day) as cd_days, max(x.cd_blk) as cd_blk,
         ${keys.map((e) => `max(x.pd_${e.key}) as pd_${e.key}`).join(', ')},
         ${byBand(ranges, ['us', 'w', 'c', 'm', 'n', 'oos', 'known'])},
         ${byBand(ranges, ['lo'], (c) => `min(x.${c})`)},
         ${byBand(ranges, ['hi'], (c) => `max(x.${c})`)},
         max(x.late_day) as late_day,
         ${ranges.map((_, i) => ['us', 'w', 'oos', 'known'].map((c) => `coalesce(sum(x.k${c}) filter (where x.band = ${i}), 0) + coalesce(sum(x.ik${c}) filter (where x.band = ${i}), 0) + coalesce(sum(x.k${c}_${i}), 0) as k${c}_${i}`).join(', ')).join(',\n         ')}
    from dg x group by x.series
),
-- Per series: the bands' sums, and the latest day of another price (price_since) and of a price
-- below today's lowest (cheaper_until), looked up among the day rows of the one block that
-- holds it when a block row is later than every day row that does (a span row gives its own).
sa as (
  select x.*,
         case when x.sd_blk > coalesce(x.sd_days, '-infinity') then (
           select max(d.day) from price_days d
            where d.product_id = $2 and d.account_id = $1 and d.series = x.series
              and d.day >= x.sd_blk and d.day < price_block_end(x.sd_blk) and (${notCurrent('d')})
         ) else x.sd_days end as sd_day,
         case when x.cd_blk > coalesce(x.cd_days, '-infinity') then (
           select max(d.day) from price_days d
            where d.product_id = $2 and d.account_id = $1 and d.series = x.series
              and d.day >= x.cd_blk and d.day < price_block_end(x.cd_blk) and ${belowLowest('d')}
         ) else x.cd_days end as cd_day
    from sg x join l on l.series = x.series
),
-- The closing row of the latest day before each edge's (a probe of the day's rows): the
-- observation before the edge when the edge's own day has none before it; for price_since and
-- cheaper_until also the next day's first observation.
pr as (
  select sa.series, k.key, k.range, c.close_at, c.close_id, c.close, c.currency, c.close_in_stock, c.close_mean,
         case when k.key in ('sd', 'cd') then (
           select min(n.open_at) from price_days n
            where n.product_id = $2 and n.account_id = $1 and n.series = sa.series
              and n.day = (select min(m.day) from price_days m
                            where m.product_id = $2 and m.account_id = $1 and m.series = sa.series and m.day > k.day))
         end as next_open
    from sa cross join lateral (values ${[
      ...keys.map((e) => `('${e.key}', ${e.range}, sa.pd_${e.key})`),
      `('sd', null, sa.sd_day)`,
      `('cd', null, sa.cd_day)`,
    ].join(', ')}) k (key, range, day)
    cross join lateral (
      select d.close_at, d.close_id, d.close, d.currency, d.close_in_stock, d.close_mean from price_days d
       where d.product_id = $2 and d.account_id = $1 and d.series = sa.series and d.day = k.day
       order by d.close_at desc, d.close_id desc limit 1) c
),
-- The carries per series and band: those kept in the day rows (each day's opening row holds the
-- previous day's closing state), and the last day's before d1 when no day row follows it.
sc as (
  select sa.series,
         ${ranges.map((_, i) => ['us', 'w', 'oos', 'known'].map((c) => `coalesce(sa.k${c}_${i}, 0) + coalesce(z.k${c}_${i}, 0) as ${c}_${i}`).join(', ')).join(',\n         ')}
    from sa left join (
      select c.series, ${carryBands(ranges, carryOut('c'), US(`date_trunc('day', c.close_at, 'UTC') + interval '24 hours'`), 'b.d1_us')}
        from pr c join l on l.series = c.series cross join bd b
       where c.key = 'c'
       group by c.series
    ) z on z.series = sa.series and sa.late_day is null
),
-- The raw rows the answer reads, per series in one index scan each: the days of the ranges'
-- starts and of the periods' instants, today's from midnight on, and the days price_since and
-- cheaper_until start from.
rw as (
  select sa.series, w.key, w.range, o.observed_at, o.id, o.price, o.currency, o.in_stock, o.samples,
         coalesce(o.price_sum / o.samples, o.price) as mean
    from sa cross join bd b
    cross join lateral (values ${[
      ...keys.map(
        (e) =>
          `('${e.key}', ${e.range}, ${e.day}, ${e.key === 'c' ? `'infinity'::timestamptz` : `${e.day} + interval '24 hours'`})`,
      ),
      `('sd', null, sa.sd_day, sa.sd_day + interval '24 hours')`,
      `('cd', null, sa.cd_day, sa.cd_day + interval '24 hours')`,
    ].join(',\n                                   ')}) w (key, range, lo, hi)
    cross join lateral ${seriesRows('sa.series', 'o.observed_at >= w.lo and o.observed_at < w.hi')} o
   where w.lo is not null
),
-- The ranges: start (exact), d0 the first UTC midnight after it, d1 today's UTC midnight.
rg as (
  select v.d as range, nw.us - v.d * 86400000000 as start_us,
         nw.at - make_interval(hours => v.d * 24) as start_at,
         ${US(`date_trunc('day', nw.at - make_interval(hours => v.d * 24), 'UTC') + interval '24 hours'`)} as d0_us,
         ${US(day('nw.at'))} as d1_us, nw.us as now_us
    from nw cross join (values ${ranges.map((d) => `(${d})`).join(', ')}) v (d)
),
-- Edge A of each range: the observations of [start, d0) and the one before start (in the start's
-- day, else the closing row of an earlier day), with the next one's instant among them (past the
-- last one, d0: the span is cut there).
ea as (
  select e.series, e.range, rg.start_us, rg.d0_us, e.pred, e.price, e.currency, e.in_stock, e.samples, e.mean,
         date_part('epoch', e.observed_at) as t, ${US('e.observed_at')} as tu,
         coalesce(${US('lead(e.observed_at) over (partition by e.series, e.range order by e.observed_at, e.id)')}, rg.d0_us) as nu
    from (
      select r.series, r.range, false as pred, ${raw('r')}
        from rw r join rg on rg.range = r.range where r.observed_at >= rg.start_at
      union all
      (select distinct on (b.series, b.range) b.series, b.range, true, b.observed_at, b.id, b.price, b.currency, b.in_stock, b.samples, b.mean
         from (
           select r.series, r.range, ${raw('r')} from rw r join rg on rg.range = r.range where r.observed_at < rg.start_at
           union all
           select c.series, c.range, ${closing('c')} from pr c where c.range is not null
         ) b
        order by b.series, b.range, b.observed_at desc, b.id desc)
    ) e join rg on rg.range = e.range
),
-- Edge C: the observations from today's midnight on and the one before it (the closing row of
-- the latest earlier day).
ec as (
  select e.*, date_part('epoch', e.observed_at) as t, ${US('e.observed_at')} as tu,
         lead(e.observed_at) over (partition by e.series order by e.observed_at, e.id) as next_at,
         ${US('lead(e.observed_at) over (partition by e.series order by e.observed_at, e.id)')} as nu
    from (
      select r.series, false as pred, ${raw('r')} from rw r where r.key = 'c'
      union all
      select c.series, true, ${closing('c')} from pr c where c.key = 'c'
    ) e
),
-- The edges' pieces per series and range: (priced microseconds, their weighted sum, priced count
-- and sum of means, lowest and highest priced pairs, observations, microseconds out of stock and
-- known).
pe as (
  select x.series, x.range, sum(x.us) as us, sum(x.w) as w, sum(x.c) as c, sum(x.m) as m, min(x.lo) as lo,
         max(x.hi) as hi, sum(x.n) as n, sum(x.oos) as oos, sum(x.known) as known
    from (
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
    ) x
   group by x.series, x.range
),
-- The price held at now - period: the latest observation at or before it, in its day or the
-- closing row of an earlier day.
pp as (
  select distinct on (y.series, y.key) y.series, y.key, y.price, y.currency
    from (
      select r.series, r.key, r.observed_at, r.id, r.price, r.currency from rw r cross join bd b
       where ${periodKeys.map((k) => `(r.key = 'p${k}' and r.observed_at <= b.x_${k})`).join(' or ')}
      union all
      select c.series, c.key, c.close_at, c.close_id, c.close, c.currency from pr c where c.key like 'p%'
    ) y
   order by y.series, y.key, y.observed_at desc, y.id desc
),
-- price_since: the observation after the latest one at another price or currency, found in the
-- latest day not all at the current price (the next one in that day, else the next day's first).
sx as (
  select distinct on (r.series) r.series, r.observed_at, r.next_at
    from (select r.*, ${next} as next_at from rw r where r.key = 'sd') r join l on l.series = r.series
   where r.price <> l.latest_price or r.currency <> l.latest_currency
   order by r.series, r.observed_at desc, r.id desc
),
-- cheaper_until: the observation after the latest priced one of a competitor converting below
-- today's lowest, found in the latest day whose priced minimum does (conversion is monotonic).
cx as (
  select distinct on (r.series) r.series, r.observed_at, r.next_at
    from (select r.*, ${next} as next_at from rw r where r.key = 'cd') r join l on l.series = r.series
   where r.currency = l.latest_currency and r.in_stock is not false
     and ${convertedSql('r.price', 'l', 'r.currency', productCurrency)} < ${lowest}
   order by r.series, r.observed_at desc, r.id desc
),
a as (
  select l.series, sa.low_ever, sa.high_ever,
         ${ranges.map((_, i) => rangeColumns(ranges, i)).join(',\n         ')},
         ${periodKeys.map((k) => `p${k}.price as p${k}_price, p${k}.currency as p${k}_currency`).join(',\n         ')},
         coalesce(case when sx.observed_at is not null then coalesce(sx.next_at, sn.next_open) end, sa.first_at) as price_since,
         case when cx.observed_at is not null then
           coalesce(cx.next_at, cn.next_open, greatest(nw.at, (
             select max(e.next_at) from ec e
              where e.series = l.series and e.next_at > nw.at and ${priced('e.currency', 'e.in_stock')}
                and ${convertedSql('e.price', 'l', 'e.currency', productCurrency)} < ${lowest})))
         end as cheaper_until
    from l cross join nw
    -- As the raw computation: only series with observations (with day rows).
    join sa on sa.series = l.series
    left join sc on sc.series = l.series
    ${ranges.map((d) => `left join pe e${d} on e${d}.series = l.series and e${d}.range = ${d}`).join('\n    ')}
    ${periodKeys.map((k) => `left join pp p${k} on p${k}.series = l.series and p${k}.key = 'p${k}'`).join('\n    ')}
    left join sx on sx.series = l.series
    left join pr sn on sn.series = l.series and sn.key = 'sd'
    left join cx on cx.series = l.series
    left join pr cn on cn.series = l.series and cn.key = 'cd'
)`;
}
