import { iso } from '../../http/fields.js';
import { type PageRequest, pageSql } from '../../pagination/page.js';
import { sequenceTiebreak, type SortKey, timestampKey } from '../../pagination/sort.js';
import { DAY_MS, WHOLE_HOUR_SPAN } from '../../time.js';
import { observationId } from '../ingest/sql.js';
import type { HistoryRange, SeriesFilter } from './params.js';
import type { BucketUnit, HistoryObservation, PriceHistoryBuckets } from './schemas.js';

/**
 * The history's SQL (docs/prices/HISTORY.md). Each request is one statement, which also says
 * whether the product is the account's (no row at all: 404), so a history costs one round trip.
 * The builders are exported so the benchmark runs exactly the SQL the endpoint runs.
 */

export interface HistoryParams extends HistoryRange {
  productId: string;
  accountId: string;
}

export interface SqlQuery {
  name: string;
  text: string;
  values: unknown[];
}

/** The series condition on `price_observations o`; `$n` is the next free parameter. */
function seriesCondition(filter: SeriesFilter | null, values: unknown[]): string {
  if (!filter) return '';
  const parts: string[] = [];
  if (filter.competitorIds.length > 0) {
    values.push(filter.competitorIds);
    parts.push(`o.competitor_id = any($${values.length}::text[])`);
  }
  if (filter.own) parts.push('o.competitor_id is null');
  return `and (${parts.join(' or ')})`;
}

/** toISOString's format in to_char (the bucket bounds are UTC instants of years 1000-9999). */
const ISO_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

/**
 * The end of the bucket starting at `start`. Hours are absolute (every whole-hour offset zone
 * shares them); days, weeks and months are steps of the calendar in the zone ($5), so a day
 * with a DST change is 23 or 25 hours long. PostgreSQL 15 has no three-argument date_add, hence
 * the round trip through local time.
 */
const bucketEnd = (unit: BucketUnit, start: string) =>
  unit === 'hour'
    ? `(${start} + interval '1 hour')`
    : `((${start} at time zone $5::text) + interval '1 ${unit}') at time zone $5::text`;

/** historyQuery's header row (BucketRow `k` 0) from the range `b` and its buckets `g`. */
const headerRow = (unit: BucketUnit) => `/* headerRow */
    select 0 as k, p.id as product_id, b.first_start as range_start, ${bucketEnd(unit, 'b.last_start')} as range_end,
           (select string_agg(to_char(g.start at time zone 'UTC', '${ISO_FORMAT}'), ',' order by g.n) from g) as starts,
           (select string_agg(to_char(g."end" at time zone 'UTC', '${ISO_FORMAT}'), ',' order by g.n) from g) as ends,
           null as competitor_id, null as competitor_name, null as currency, null as buckets
      from products p, b
     where p.id = $1 and p.account_id = $2`;

/** Every bucket of the range: the one holding `from` to the one holding the last instant before `to`. */
function bucketsSql(unit: BucketUnit): string {
  return unit === 'hour'
    ? `/* bucketsSql */ select n, s as start, s + interval '1 hour' as "end"
         from b, generate_series(b.first_start, b.last_start, interval '1 hour') with ordinality as l (s, n)`
    : `/* bucketsSql */ select n, l at time zone $5::text as start, (l + interval '1 ${unit}') at time zone $5::text as "end"
         from b, generate_series(b.first_start at time zone $5::text, b.last_start at time zone $5::text, interval '1 ${unit}')
              with ordinality as t (l, n)`;
}

/**
 * Where a bucketed history reads its observations when every bucket boundary is a whole UTC
 * hour (else always the raw rows): `days` the whole UTC days inside a bucket from price_days and
 * the hours at its edges from price_hours (hour buckets: hours only); `hours` price_hours only;
 * `raw` always the raw rows (today's computation, kept for the tests that compare the sources
 * and for the benchmark); `utcDays` day buckets in UTC only: each bucket is one price_days row
 * per series and currency, read straight into the answer's text (utcDaysQuery); `localDays` day
 * buckets in a zone of HISTORY_ZONES: each bucket is one price_local_days row per series and
 * currency where the product's local day has rows, else its hours (localDaysQuery). Every source
 * gives the same answer; defaultSource picks the cheaper.
 */
export type BucketSource = 'days' | 'hours' | 'raw' | 'utcDays' | 'localDays';

const offsetNames = new Map<string, Intl.DateTimeFormat>();

/** Whether `tz` is at UTC+0 at `at` (Node's zone data: a wrong guess costs time, never the answer). */
function atUtc(tz: string, at: Date): boolean {
  let f = offsetNames.get(tz);
  if (!f) offsetNames.set(tz, (f = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' })));
  return /^GMT(\+00:00)?$/.test(f.formatToParts(at).find((x) => x.type === 'timeZoneName')?.value ?? '');
}

/**
 * `utcDays` for day buckets in UTC (every alias of it is canonically `UTC`): the one case whose
 * buckets are known to be UTC days without looking at the zone's rules. Otherwise
 * `hours` for day buckets unless the zone stays at UTC+0 over the range (checked every 30 days):
 * a day bucket of a zone away from UTC holds no whole UTC day, so the days statement would read
 * every hour of those days anyway, through a filter and a sort the hours-only statement does
 * without (a year in Europe/Berlin: ~100 against ~230 ms of PostgreSQL CPU; Europe/London, half
 * a year at +1: ~100 against ~180; docs/BENCHMARKS.md), or `localDays` for day buckets in one of
 * `zones` (HISTORY_ZONES, each checked to keep whole-hour offsets over WHOLE_HOUR_SPAN, which the
 * range must lie in). `days` otherwise.
 */
export function defaultSource(p: HistoryRange & { interval: BucketUnit }, zones: readonly string[] = []): BucketSource {
  if (p.interval !== 'day') return 'days';
  if (p.tz === 'UTC') return 'utcDays';
  if (zones.includes(p.tz) && p.from.getTime() >= WHOLE_HOUR_SPAN.from + DAY_MS && p.to.getTime() <= WHOLE_HOUR_SPAN.to)
    return 'localDays';
  for (let t = p.from.getTime(); t < p.to.getTime(); t += 30 * 86_400_000)
    if (!atUtc(p.tz, new Date(t))) return 'hours';
  return atUtc(p.tz, p.to) ? 'days' : 'hours';
}

/**
 * Bucketed history: per series and currency, every bucket of the range with open, close, min,
 * max, count and average. Counts and sums honour rolled-up rows (`samples`, `price_sum`); the
 * average is rounded half up to 4 decimals in exact integer arithmetic (prices are never
 * negative, so half up is half away from zero). Rows (BucketRow): a header with the range and
 * every bucket's start and end, then one per series and currency with its buckets that have
 * observations as one text, our own series first, then by competitor id and currency;
 * historyJson (json.ts) and toBuckets add the empty buckets. Another account's product gives no row at all.
 *
 * The inputs are days, hours or observations, in one shape (an observation is an hour of one
 * row): open and close with the (observed_at, id) that orders them, min, max, count, total.
 * Buckets whose boundaries all fall on whole UTC hours (hour buckets, and day, week and month
 * buckets of any zone whose offset is a whole number of hours in the range, DST days included)
 * merge aggregates: each UTC day lying wholly inside a bucket is one price_days row, the hours
 * of the bucket outside such days (a day bucket in Europe/Berlin: all 24; in UTC: none) are
 * price_hours rows. Otherwise (zones such as Asia/Kolkata) the raw rows are read. The choices
 * are made in the statement (`w.whole`, `w.edges`), and a branch not taken is never run.
 */
export function historyQuery(
  p: HistoryParams & { interval: BucketUnit },
  source: BucketSource = defaultSource(p),
): SqlQuery {
  if (source === 'utcDays') return utcDaysQuery(p);
  if (source === 'localDays') return localDaysQuery(p);
  const unit = p.interval;
  const values: unknown[] = [p.productId, p.accountId, p.from.toISOString(), p.to.toISOString(), p.tz];
  const series = seriesCondition(p.series, values);
  // The widened bounds are also given as plain parameters (a bucket is at most 31 days and a
  // zone's offset under a day), so the planner sees the range and reads the product's rows
  // through the series index (price_observations_series_cover, migrations/0026) rather than every product's rows.
  const rawRows = `/* historyRawRows */
      select coalesce(o.competitor_id, '') as series, o.currency,
             o.observed_at as open_at, o.id as open_id, o.price as open,
             o.observed_at as close_at, o.id as close_id, o.price as close,
             o.price as min, o.price as max, o.samples::bigint as count,
             coalesce(o.price_sum, o.price * o.samples) as total, false as alone,
             width_bucket(o.observed_at, gs.starts) as n
        from b, gs, price_observations o
       where o.product_id = $1 and o.account_id = $2
         and o.observed_at >= $3::timestamptz - interval '33 days' and o.observed_at < $4::timestamptz + interval '33 days'
         and o.observed_at >= b.first_start and o.observed_at < ${bucketEnd(unit, 'b.last_start')}
         ${series}`;
  // Not for the hours of a longer range read alone: with both pairs of bounds the generic
  // plan expects a few dozen hours and sorts the 96 000 of a year to group them (2x the CPU).
  const hourBounds =
    source === 'hours' && unit !== 'hour'
      ? ''
      : `and o.hour >= $3::timestamptz - interval '33 days' and o.hour < $4::timestamptz + interval '33 days'`;
  const hourRowsFrom = (from: string) => `/* historyHourRows */
      select o.series, o.currency, o.open_at, o.open_id, o.open, o.close_at, o.close_id, o.close,
             o.min, o.max, o.count, o.total::numeric as total, false as alone,
             width_bucket(o.hour, gs.starts) as n
        from ${from}
       where o.product_id = $1 and o.account_id = $2
         ${hourBounds}
         and o.hour >= b.first_start and o.hour < ${bucketEnd(unit, 'b.last_start')}
         ${series}`;
  const hourRows = hourRowsFrom('b, gs, price_hours o');
  // The UTC days lying wholly inside a bucket come from price_days (a day of bucket n when it
  // ends by the bucket's end: it starts at or after the bucket's start, as width_bucket put it
  // there), the other hours from price_hours. When every boundary is a UTC midnight there are
  // no other hours and that branch is not run (`w.edges`); otherwise it reads the hours of each
  // bucket's edges (`e`: one index range each), not the range's every hour through a filter (a
  // year of Europe/Berlin weeks: 25 against 85 ms of PostgreSQL CPU, months 10 against 79).
  const dayRows = `/* historyDayRows */
      select o.series, o.currency, o.open_at, o.open_id, o.open, o.close_at, o.close_id, o.close,
             o.min, o.max, o.count, o.total::numeric as total,
             o.day = gs.starts[width_bucket(o.day, gs.starts)]
               and o.day + interval '24 hours' = gs.ends[width_bucket(o.day, gs.starts)] as alone,
             width_bucket(o.day, gs.starts) as n
        from b, gs, price_days o
       where o.product_id = $1 and o.account_id = $2
         and o.day >= $3::timestamptz - interval '33 days' and o.day < $4::timestamptz + interval '33 days'
         and o.day >= b.first_start and o.day < ${bucketEnd(unit, 'b.last_start')}
         and o.day + interval '24 hours' <= gs.ends[width_bucket(o.day, gs.starts)]
         ${series}`;
  const edgeHourRows = `${hourRowsFrom('b, gs, e join price_hours o on o.hour >= e.lo and o.hour < e.hi')}
         and (select edges from w)`;
  // A bucket's edges: from its start to its first whole UTC day and from its last whole day's
  // end to its end, or all of it when it holds no whole day (`fd`, `ld`: where whole days
  // start and stop).
  const edges =
    source === 'days' && unit !== 'hour'
      ? `e as (
      select v.lo, v.hi
        from g,
             lateral (select case when date_trunc('day', g.start, 'UTC') = g.start then g.start
                                  else date_trunc('day', g.start, 'UTC') + interval '1 day' end as fd,
                             date_trunc('day', g."end", 'UTC') as ld) d,
             lateral (values (g.start, case when d.fd < d.ld then d.fd else g."end" end),
                             (case when d.fd < d.ld then d.ld else g."end" end, g."end")) v (lo, hi)
       where v.lo < v.hi
    ),`
      : '';
  const input =
    source === 'raw'
      ? rawRows
      : source === 'hours' || unit === 'hour'
        ? `${rawRows} and not (select whole from w)
      union all
      ${hourRows} and (select whole from w)`
        : `${rawRows} and not (select whole from w)
      union all
      ${dayRows} and (select whole from w)
      union all
      ${edgeHourRows} and (select whole from w)`;
  const text = `/* historyQuery */
    with b as (
      select date_trunc('${unit}', $3::timestamptz, $5::text) as first_start,
             date_trunc('${unit}', $4::timestamptz - interval '1 microsecond', $5::text) as last_start
    ),
    g as (${bucketsSql(unit)}),
    gs as (select array_agg(start order by n) as starts, array_agg("end" order by n) as ends from g),
    -- Whether every bucket boundary is a whole UTC hour: then the buckets are unions of hours;
    -- and whether one is not a UTC midnight: then some hours lie outside whole UTC days.
    w as (select bool_and(date_trunc('hour', start, 'UTC') = start and date_trunc('hour', "end", 'UTC') = "end") as whole,
                 bool_or(date_trunc('day', start, 'UTC') <> start or date_trunc('day', "end", 'UTC') <> "end") as edges
            from g),
    ${edges}
    -- The bucket of each row by binary search over the starts: no time zone work per row.
    o as (${input}
    ),
    -- Only the buckets with observations: the empty ones, and every bucket's start and end, are
    -- filled in by historyJson and toBuckets from the header row's texts (a year by day: 4 026
    -- rows of 14 columns with 4 timestamps each cost more to format and sort than to compute).
    a as (
      select series, currency, n,
             -- The first and last by (at, id) as the least and greatest [epoch, id, price]: an
             -- ordered array_agg sorts each group on its own (22 % more CPU for a year by day).
             -- A day row that is its whole bucket (alone: a day bucket of a UTC+0 zone) is
             -- the only row of its group, so its own open and close are the answer and no
             -- array is built for it (~1.2 of ~15 ms for a year of UTC days).
             coalesce((min(array[extract(epoch from open_at), open_id, open]) filter (where not alone))[3],
                      min(open) filter (where alone)) as open,
             coalesce((max(array[extract(epoch from close_at), close_id, close]) filter (where not alone))[3],
                      max(close) filter (where alone)) as close,
             min(min) as min, max(max) as max, sum(count) as count, sum(total) as total
        from o
       group by series, currency, n
    )
    -- One row per series and currency: its buckets with observations as one text, each bucket
    -- its number and six numbers already written as JSON writes them (trailing zeros trimmed:
    -- Number("10.50") is 10.5), so the driver parses 12 strings, not 4 026 rows of numerics
    -- (docs/prices/HISTORY.md, "The answer's text").
    select * from (
    ${headerRow(unit)}
    union all
    select 1, null, null, null, null, null, nullif(a.series, ''), c.name, a.currency,
           string_agg(concat_ws(',', a.n, ${['a.open', 'a.close', 'a.min', 'a.max', 'a.average', 'a.count']
             .map((x) => `coalesce(trim_scale(${x})::text, 'null')`)
             .join(', ')}), ',' order by a.n)
      from (select a.*, case when a.count > 0 then div(a.total * 20000 + a.count, 2 * a.count) * 0.0001 end as average
              from a) a
      left join competitors c on c.id = nullif(a.series, '')
     where exists (select 1 from products p where p.id = $1 and p.account_id = $2)
     group by a.series, a.currency, c.name
    ) r
     order by k, competitor_id collate "C" nulls first, currency collate "C"`;
  const name = {
    days: 'price_history_buckets',
    hours: 'price_history_buckets_hours',
    raw: 'price_history_buckets_raw',
  };
  return { name: name[source], text, values };
}

/**
 * A bucket's six values in `BucketRow.buckets` from one row `o` per bucket (open, close, min, max,
 * count, total): price_bucket_text (migrations/0025), which the month texts are written with too.
 * A bucket whose observations all have one price (most days of a price that seldom changes)
 * writes it once: open, close, min and max are equal, and so is the average when the total is
 * that price times the count (the exact sum of equal prices). Each numeric written costs.
 */
const bucketValues = `price_bucket_text(o.open, o.close, o.min, o.max, o.total, o.count)`;

/** The UTC days [start, end) holding `from` to the last instant before `to` (as date_trunc gives them). */
function utcDayRange(p: HistoryRange): { start: Date; end: Date } {
  const start = Math.floor(p.from.getTime() / DAY_MS) * DAY_MS;
  return { start: new Date(start), end: new Date(Math.floor((p.to.getTime() - 1) / DAY_MS) * DAY_MS + DAY_MS) };
}

/**
 * The rows of a statement whose buckets are days written straight into each series' text
 * (utcDaysQuery, localDaysQuery): the header row `header`, then one row per series and currency
 * from `buckets` (series, currency, buckets) with the competitor's name, none at all for another
 * account's product, in BucketRow's order.
 */
const seriesTextRows = (header: string, buckets: string) => `/* seriesTextRows */ select * from (
    ${header}
    union all
    select 1, null, null, null, null, null, nullif(a.series, ''), c.name, a.currency, a.buckets
      from (${buckets}) a
      left join competitors c on c.id = nullif(a.series, '')
     where exists (select 1 from products p where p.id = $1 and p.account_id = $2)
    ) r
     order by k, competitor_id collate "C" nulls first, currency collate "C"`;

/**
 * The pieces of the UTC days [start, end) the UTC days' statement reads apart: the UTC months
 * lying wholly inside it (`whole`), and the days before the first and after the last of them.
 */
export function monthPieces(start: Date, end: Date): { lo: Date; hi: Date; whole: boolean }[] {
  const out: { lo: Date; hi: Date; whole: boolean }[] = [];
  let lo = start;
  for (;;) {
    const m = new Date(Date.UTC(lo.getUTCFullYear(), lo.getUTCMonth() + (lo.getUTCDate() === 1 ? 0 : 1), 1));
    const next = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1));
    if (next > end) break;
    if (m > lo) out.push({ lo, hi: m, whole: false });
    out.push({ lo: m, hi: next, whole: true });
    lo = next;
  }
  if (lo < end) out.push({ lo, hi: end, whole: false });
  return out;
}

/**
 * historyQuery's rows for day buckets in UTC, where every bucket is exactly one price_days row
 * per series and currency, each written as price_day_text writes it (its day since 1970-01-01,
 * then its values) in day order into its series' text. A UTC month lying wholly inside the range
 * is its month texts when the product has them (migrations/0025, built once the month has ended:
 * one row per series, nothing to compute), its day rows otherwise, as are the days of the range's
 * partial months: so the answer is the day rows' whether or not the texts were built. Nothing to
 * merge (no width_bucket, arrays or group per bucket), and the range and buckets are computed
 * here: the header row leaves `starts` and `ends` null, which says its buckets are the UTC days
 * from range_start to range_end numbered by their day since 1970-01-01 (parts() makes them the
 * buckets' numbers). A year of 11 series: ~7 against ~15 ms of PostgreSQL CPU from the day rows,
 * ~2 from the texts (docs/BENCHMARKS.md).
 */
function utcDaysQuery(p: HistoryParams & { interval: BucketUnit }): SqlQuery {
  if (p.interval !== 'day' || p.tz !== 'UTC')
    throw new Error(`utcDays is for day buckets in UTC, not ${p.interval} in ${p.tz}`);
  const { start, end } = utcDayRange(p);
  const pieces = monthPieces(start, end);
  const values: unknown[] = [
    p.productId,
    p.accountId,
    start.toISOString(),
    end.toISOString(),
    pieces.map((x) => x.lo.toISOString()),
    pieces.map((x) => x.hi.toISOString()),
    pieces.filter((x) => x.whole).map((x) => x.lo.toISOString()),
  ];
  const series = seriesCondition(p.series, values);
  // The plain bounds let the planner prune the months outside the range; each piece without
  // texts is one range of the day rows' key (the pieces with texts are never read).
  const text = `/* utcDaysQuery */
    with t as materialized (
      select o.series, o.currency, o.month as at, o.buckets
        from price_day_texts o
       where o.product_id = $1 and o.account_id = $2 and o.month = any ($7::timestamptz[])
         and o.month >= $3::timestamptz and o.month < $4::timestamptz
         ${series}
    ),
    d as (
      select o.series, o.currency, o.day as at,
             price_day_text(o.day, o.open, o.close, o.min, o.max, o.total, o.count) as buckets
        from unnest($5::timestamptz[], $6::timestamptz[]) r (lo, hi)
        join price_days o on o.day >= r.lo and o.day < r.hi
       where o.product_id = $1 and o.account_id = $2 and o.day >= $3::timestamptz and o.day < $4::timestamptz
         and not exists (select 1 from t where t.at = r.lo)
         ${series}
    )
    ${seriesTextRows(
      `/* utcDaysHeader */ select 0 as k, p.id as product_id, $3::timestamptz as range_start, $4::timestamptz as range_end,
              null as starts, null as ends, null as competitor_id, null as competitor_name, null as currency, null as buckets
         from products p
        where p.id = $1 and p.account_id = $2`,
      `/* utcDaysBuckets */ select o.series, o.currency, string_agg(o.buckets, ',' order by o.at) as buckets
         from (select * from t union all select * from d) o
        group by o.series, o.currency`,
    )}`;
  return { name: 'price_history_utc_days', text, values };
}

/**
 * historyQuery's rows for day buckets in a zone of HISTORY_ZONES (whole-hour offsets: every local
 * day is a union of UTC hours). A local day the product has price_local_days rows for in the zone
 * (migrations/0024: then it has one for every series and currency with hours that day, those of
 * the hours there now) is one row per series and currency, written straight into the series'
 * text as utcDaysQuery writes a price_days row, its bucket's number its date's distance from the
 * range's first; the hours of the other days (runs of consecutive days: one index range each)
 * are merged by bucket as historyQuery merges them. So the answer is the hours' whether or not
 * the days were built. A year of 11 series with the days built: ~4 000 rows instead of ~96 000.
 */
function localDaysQuery(p: HistoryParams & { interval: BucketUnit }): SqlQuery {
  if (p.interval !== 'day') throw new Error(`localDays is for day buckets, not ${p.interval}`);
  const values: unknown[] = [p.productId, p.accountId, p.from.toISOString(), p.to.toISOString(), p.tz];
  const series = seriesCondition(p.series, values);
  const text = `/* localDaysQuery */
    with b as (
      select date_trunc('day', $3::timestamptz, $5::text) as first_start,
             date_trunc('day', $4::timestamptz - interval '1 microsecond', $5::text) as last_start
    ),
    g as (${bucketsSql('day')}),
    gs as (select array_agg(start order by n) as starts from g),
    -- The range's built local days (the plain bounds let the planner prune the months).
    d as materialized (
      select o.series, o.currency, o.local_day - (b.first_start at time zone $5::text)::date + 1 as n,
             o.open, o.close, o.min, o.max, o.count, o.total
        from b, price_local_days o
       where o.product_id = $1 and o.zone = $5::text and o.account_id = $2
         and o.day >= $3::timestamptz - interval '1 day' and o.day < $4::timestamptz + interval '1 day'
         and o.day >= b.first_start and o.day <= b.last_start
         ${series}
    ),
    -- The other local days, as runs of consecutive days.
    e as (
      select min(u.start) as lo, max(u."end") as hi
        from (select g.start, g."end", g.n - row_number() over (order by g.n) as run
                from g where g.n not in (select d.n from d)) u
       group by u.run
    ),
    h as (
      select o.series, o.currency, width_bucket(o.hour, gs.starts) as n,
             (min(array[extract(epoch from o.open_at), o.open_id, o.open]))[3] as open,
             (max(array[extract(epoch from o.close_at), o.close_id, o.close]))[3] as close,
             min(o.min) as min, max(o.max) as max, sum(o.count) as count, sum(o.total) as total
        from gs, e join price_hours o on o.hour >= e.lo and o.hour < e.hi
       where o.product_id = $1 and o.account_id = $2
         ${series}
       group by o.series, o.currency, width_bucket(o.hour, gs.starts)
    )
    ${seriesTextRows(
      headerRow('day'),
      `/* localDaysBuckets */ select o.series, o.currency, string_agg(concat_ws(',', o.n, ${bucketValues}, o.count), ',' order by o.n) as buckets
         from (select * from d union all select * from h) o
        group by o.series, o.currency`,
    )}`;
  return { name: 'price_history_local_days', text, values };
}

/**
 * A row of historyQuery: first the header (`k` 0: the range, and every bucket's start and end in
 * order as ISO 8601 texts joined by commas, or both null when every bucket is a UTC day of the
 * range: utcDaysQuery), then one row per series and currency with
 * observations (`k` 1), by series ('' first) and currency: `buckets` its buckets with
 * observations joined by commas, seven fields each (the bucket's 1-based number, or for
 * utcDaysQuery its day since 1970-01-01; then open, close, min, max, average and count as JSON
 * numbers, or `null`; close, min, max and average empty when all four equal open).
 */
export interface BucketRow {
  k: number;
  product_id: string | null;
  range_start: Date | null;
  range_end: Date | null;
  starts: string | null;
  ends: string | null;
  competitor_id: string | null;
  competitor_name: string | null;
  currency: string | null;
  buckets: string | null;
}

/** A bucket of one series and currency, empty ones included. */
export interface Bucket {
  competitor_id: string | null;
  competitor_name: string | null;
  currency: string;
  /** ISO 8601, as the answer shows it. */
  start: string;
  end: string;
  open: number | null;
  close: number | null;
  min: number | null;
  max: number | null;
  average: number | null;
  count: number;
}

/** The fields of a bucket in `BucketRow.buckets`: its number and six values. */
const FIELDS = 7;

const numberOf = (t: string) => (t === 'null' ? null : Number(t));
/** Field `k` (1 to 5) of the bucket at `i`: empty is the open's value. */
const valueOf = (fields: string[], i: number, k: number) => numberOf(fields[i + k] || fields[i + 1]!);

/** Each UTC day's start from `start` to `end` and the next one's, as ISO 8601 texts. */
function utcDays(start: Date, end: Date): string[] {
  const out: string[] = [];
  for (let t = start.getTime(); t <= end.getTime(); t += DAY_MS) out.push(new Date(t).toISOString());
  return out;
}

/**
 * The buckets of historyQuery's rows, from their header row: each one's start and end as the
 * answer shows them, and `base`, what a bucket's number in the series' texts has more than its
 * number in the answer (1-based).
 */
export function bucketBounds(rows: BucketRow[]): { starts: string[]; ends: string[]; base: number } | undefined {
  const head = rows[0];
  if (!head) return undefined;
  if (head.starts && head.ends) return { starts: head.starts.split(','), ends: head.ends.split(','), base: 0 };
  const days = utcDays(head.range_start!, head.range_end!);
  return { starts: days.slice(0, -1), ends: days.slice(1), base: head.range_start!.getTime() / DAY_MS - 1 };
}

/** Every bucket of every series with observations, in the answer's order (series, currency, start). */
export function toBuckets(rows: BucketRow[]): Bucket[] {
  const p = bucketBounds(rows);
  if (!p) return [];
  const out: Bucket[] = [];
  for (const row of rows.slice(1)) {
    const fields = row.buckets!.split(',');
    const { competitor_id, competitor_name } = row;
    const currency = row.currency!;
    let i = 0;
    for (let n = 1; n <= p.starts.length; n++) {
      const here = i < fields.length && Number(fields[i]) === n + p.base;
      out.push({
        competitor_id,
        competitor_name,
        currency,
        start: p.starts[n - 1]!,
        end: p.ends[n - 1]!,
        open: here ? valueOf(fields, i, 1) : null,
        close: here ? valueOf(fields, i, 2) : null,
        min: here ? valueOf(fields, i, 3) : null,
        max: here ? valueOf(fields, i, 4) : null,
        average: here ? valueOf(fields, i, 5) : null,
        count: here ? Number(fields[i + 6]) : 0,
      });
      if (here) i += FIELDS;
    }
  }
  return out;
}

/** Rows of historyQuery as the API's series. */
export function toSeries(rows: BucketRow[]): PriceHistoryBuckets['series'] {
  const out: PriceHistoryBuckets['series'] = [];
  let current: PriceHistoryBuckets['series'][number] | undefined;
  for (const b of toBuckets(rows)) {
    if (!current || current.competitor_id !== b.competitor_id || current.currency !== b.currency) {
      current = { competitor_id: b.competitor_id, currency: b.currency, buckets: [] };
      out.push(current);
    }
    current.buckets.push({
      start: b.start,
      end: b.end,
      open: b.open,
      close: b.close,
      min: b.min,
      max: b.max,
      average: b.average,
      count: b.count,
    });
  }
  return out;
}

export interface ObservationRow {
  product_id: string;
  id: number | string | null;
  competitor_id: string | null;
  competitor_name: string | null;
  listing_id: string | null;
  price: string;
  currency: string;
  in_stock: boolean | null;
  observed_at: Date;
  source: 'scrape' | 'api';
  samples: number;
  price_sum: string;
}

/** Where a raw page continues: after this (observed_at, id). */
/** Raw observations have one order, oldest first, ties by id. */
export const RAW_SORTS = {
  observed_at: {
    ...timestampKey<ObservationRow>('o.observed_at', (r) => r.observed_at),
    tiebreak: sequenceTiebreak<ObservationRow>('obs', 'o.id', (r) => r.id!),
  },
} satisfies Record<string, SortKey<ObservationRow>>;

/**
 * A page of raw observations in [from, to), oldest first by (observed_at, id) across series.
 * The product row comes with it: no row at all is another account's product; one row with a
 * null id is a product with nothing (more) in the range.
 */
export function rawQuery(p: HistoryParams, page: PageRequest<ObservationRow>): SqlQuery {
  const values: unknown[] = [p.productId, p.accountId, p.from.toISOString(), p.to.toISOString()];
  const series = seriesCondition(p.series, values);
  // Expanded: the series index (product_id, competitor_id, observed_at) holds no id.
  const keyset = pageSql(page, values, { expanded: true });
  const after = keyset.after ? `and ${keyset.after}` : '';
  const text = `/* rawQuery */
    select p.id as product_id, o.id, o.competitor_id, c.name as competitor_name, o.listing_id, o.price, o.currency,
           o.in_stock, o.observed_at, o.source, o.samples, o.price_sum
      from products p
      left join lateral (
        select o.id, o.competitor_id, o.listing_id, o.price, o.currency, o.in_stock, o.observed_at, o.source, o.samples,
               coalesce(o.price_sum, o.price * o.samples) as price_sum
          from price_observations o
         where o.product_id = p.id and o.account_id = p.account_id
           and o.observed_at >= $3::timestamptz and o.observed_at < $4::timestamptz
           ${series} ${after}
         order by ${keyset.orderBy}
         limit ${keyset.limit}
      ) o on true
      left join competitors c on c.id = o.competitor_id
     where p.id = $1 and p.account_id = $2
     order by o.observed_at, o.id`;
  return { name: 'price_history_raw', text, values };
}

/**
 * Of `productIds` (the account's), those with at least one observation in [from, to) of the
 * series asked for: an account-wide export reads the others no further. One index probe per
 * product (the series index, `price_observations_series_cover`), stopping at the first row.
 */
export function observedProductsQuery(p: HistoryRange & { accountId: string; productIds: string[] }): SqlQuery {
  const values: unknown[] = [p.productIds, p.accountId, p.from.toISOString(), p.to.toISOString()];
  const series = seriesCondition(p.series, values);
  const text = `/* observedProductsQuery */
    select p.id from unnest($1::text[]) as p (id)
     where exists (
       select 1 from price_observations o
        where o.product_id = p.id and o.account_id = $2
          and o.observed_at >= $3::timestamptz and o.observed_at < $4::timestamptz
          ${series}
     )`;
  return { name: 'observed_products', text, values };
}

export function toObservation(r: ObservationRow): HistoryObservation {
  return {
    id: observationId(r.id!), // rawRows drops the product-only row, whose id is null
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    price: Number(r.price),
    currency: r.currency,
    in_stock: r.in_stock,
    observed_at: iso(r.observed_at),
    source: r.source,
    samples: Number(r.samples),
    price_sum: Number(r.price_sum),
  };
}
