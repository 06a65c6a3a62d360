import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import type { PriceHistory } from '../helpers/api-types.js';
import { historyRange } from '../../src/prices/history/params.js';
import {
  defaultSource,
  historyQuery,
  toSeries,
  type BucketRow,
  type BucketSource,
} from '../../src/prices/history/sql.js';
import { rollupPrices } from '../../src/prices/rollup/index.js';
import { buildAllLocalDays } from '../../src/prices/history/local-days.js';
import { buildAllMonthTexts } from '../../src/prices/history/month-texts.js';
import { dropObservationsBefore, ensureObservationPartitions } from '../../src/prices/partitions/index.js';
import { account, competitor, insertObservations, post, type Headers, type Obs } from './history-support.js';
import { ingestOk } from './ingest-support.js';
import type { Queryable } from '../../src/db/types.js';
import { lcg as prng, shuffle } from '../helpers/prng.js';

/**
 * The hourly and daily aggregates (migrations/0015 and 0017, docs/prices/HISTORY.md "Hourly
 * aggregates" and "Daily aggregates") answer bucketed history EXACTLY as the raw rows do: on random data (our own series and competitors',
 * gaps, late observations, ties, currency switches, stock changes), every interval, zones with
 * whole-hour offsets (DST changes included) and with :30 and :45 offsets, and series filters, the
 * HTTP answer is compared with today's computation over the raw rows (historyQuery's `raw`
 * source), after ingestion, after the retention roll-up, after deletes and partition drops;
 * so are the hours-only source (`hours`) and UTC days' own statement (`utcDays`), and both tables equal the aggregates of the raw rows,
 * price_days' trends columns (migrations/0018: extremes of priced prices, time-weighted spans cut
 * at the day's end) included.
 */

const SEED = Number(process.env.HOURS_SEED ?? 20251129);
const H = 3_600_000;
const START = Date.parse('2025-02-24T00:00:00Z');
/** Six weeks: both DST changes of spring 2025 (New York 2025-03-09, Berlin 2025-03-30) and three month boundaries. */
const HOURS = 6 * 7 * 24;

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Adelaide',
  'Asia/Tokyo',
  'Pacific/Chatham',
  // UTC+0 until 2025-03-30, then +1: day buckets read days or hours depending on the range.
  'Europe/London',
];
const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
/** HISTORY_ZONES of the test's app: their day buckets read the local days (migrations/0024), built or not. */
const LOCAL_ZONES = ['America/New_York', 'Europe/Berlin', 'Europe/London'];

/**
 * A series' observations: stretches of activity and gaps (hours and whole days with nothing),
 * 0 to 5 observations in an active hour at random milliseconds (some at the same instant, so ids
 * break ties), prices with 4 decimals and repeats, stock true/false/unknown, and for some series
 * a switch of currency for a while.
 */
function series(rand: () => number, competitorId: string | null, switchesCurrency: boolean): Obs[] {
  const out: Obs[] = [];
  let price = 10 + Math.floor(rand() * 400) / 4;
  let stock: boolean | null = true;
  for (let h = 0; h < HOURS; h++) {
    if (rand() < 0.35) continue; // a gap hour
    if (h % 24 === 0 && rand() < 0.15) {
      h += 23; // a gap day
      continue;
    }
    const n = Math.floor(rand() * 6);
    let last: string | undefined;
    for (let i = 0; i < n; i++) {
      if (rand() < 0.3) price = Math.max(0, price + (Math.floor(rand() * 81) - 40) / 4 + (rand() < 0.3 ? 0.0001 : 0));
      if (rand() < 0.1) stock = [true, false, null][Math.floor(rand() * 3)]!;
      const at =
        last !== undefined && rand() < 0.15 ? last : new Date(START + h * H + Math.floor(rand() * H)).toISOString();
      last = at;
      out.push({
        competitor: competitorId,
        price: price.toFixed(4),
        at,
        inStock: stock,
        currency: switchesCurrency && h > HOURS / 3 && h < HOURS / 2 ? 'USD' : 'EUR',
      });
    }
  }
  return out;
}

describe(`price history from hourly and daily aggregates (seed ${SEED})`, () => {
  const t = useTestApp({ HISTORY_ZONES: LOCAL_ZONES.join(',') });
  let headers: Headers;
  let accountId: string;
  let productId: string;
  let comps: string[];
  const rand = prng(SEED);

  /** A random range for the interval within the data (and a little beyond), within its span limit. */
  function randomRange(interval: (typeof INTERVALS)[number]): { from: string; to: string } {
    const maxSpan = interval === 'hour' ? 31 * 24 : HOURS + 24 * 10;
    const span = Math.max(1, Math.floor(rand() * maxSpan));
    const from = START - 5 * 24 * H + Math.floor(rand() * (HOURS + 10 * 24 - span) * H) + Math.floor(rand() * H);
    return { from: new Date(from).toISOString(), to: new Date(from + span * H + Math.floor(rand() * H)).toISOString() };
  }

  /** Today's answer, from the raw rows (or from another source, to compare it too). */
  async function expected(query: URLSearchParams, source: BucketSource = 'raw') {
    const q = Object.fromEntries(query) as Record<string, string>;
    const range = historyRange({
      ...q,
      interval: q.interval as never,
      competitor_id: q.competitor_id?.split(','),
    });
    const sql = historyQuery({ ...range, interval: range.interval as never, productId, accountId }, source);
    const rows = (await t.rt.db.query<BucketRow>(sql.text, sql.values)).rows;
    return { from: rows[0]!.range_start!.toISOString(), to: rows[0]!.range_end!.toISOString(), series: toSeries(rows) };
  }

  async function compare(label: string, cases = 3) {
    let compared = 0;
    for (const interval of INTERVALS) {
      for (const tz of ZONES) {
        // UTC days have a statement of their own (utcDays): more ranges and every filter.
        // So do the zones of local days (localDays).
        const more = interval === 'day' && (tz === 'UTC' || LOCAL_ZONES.includes(tz));
        for (let i = 0; i < (more ? cases * 3 : cases); i++) {
          const filter = [undefined, 'own', comps[0], `${comps[1]},own`][i % 4];
          const query = new URLSearchParams({ ...randomRange(interval), interval, tz });
          if (filter) query.set('competitor_id', filter);
          const res = await t.app.inject({
            method: 'GET',
            url: `/api/v1/products/${productId}/prices?${query}`,
            headers,
          });
          assert.equal(res.statusCode, 200, res.body);
          const got = res.json<PriceHistory>();
          const want = await expected(query);
          assert.deepEqual({ from: got.from, to: got.to, series: got.series }, want, `${label}: ${query.toString()}`);
          assert.deepEqual(await expected(query, 'hours'), want, `${label} (hours only): ${query.toString()}`);
          assert.deepEqual(await expected(query, 'days'), want, `${label} (days and hours): ${query.toString()}`);
          if (interval === 'day' && tz === 'UTC')
            assert.deepEqual(await expected(query, 'utcDays'), want, `${label} (UTC days): ${query.toString()}`);
          if (interval === 'day' && LOCAL_ZONES.includes(tz))
            assert.deepEqual(await expected(query, 'localDays'), want, `${label} (local days): ${query.toString()}`);
          compared += got.series.reduce((n, s) => n + s.buckets.filter((b) => b.count > 0).length, 0);
        }
      }
    }
    assert.ok(compared > 500, `${label}: only ${compared} non-empty buckets compared`);
  }

  /**
   * Day buckets in UTC over ranges holding February 2025, March 2025 or both wholly (the month
   * texts' case, migrations/0025) and ranges ending inside them, against the raw rows.
   */
  async function compareUtcDays(label: string, cases = 16) {
    let compared = 0;
    for (let i = 0; i < cases; i++) {
      const from =
        i % 4 === 0
          ? Date.parse('2025-03-01T00:00:00Z')
          : Date.parse('2025-01-20T00:00:00Z') +
            Math.floor(rand() * 45 * 24 * H) +
            (i % 2 ? Math.floor(rand() * H) : 0);
      const to =
        i % 4 === 0
          ? Date.parse('2025-04-01T00:00:00Z')
          : Date.parse('2025-03-25T00:00:00Z') +
            Math.floor(rand() * 20 * 24 * H) +
            (i % 3 ? Math.floor(rand() * H) : 0);
      const query = new URLSearchParams({
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        interval: 'day',
        tz: 'UTC',
      });
      const filter = [undefined, 'own', comps[0], `${comps[1]},own`][i % 4];
      if (filter) query.set('competitor_id', filter);
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices?${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      const got = res.json<PriceHistory>();
      const want = await expected(query);
      assert.deepEqual({ from: got.from, to: got.to, series: got.series }, want, `${label}: ${query.toString()}`);
      compared += got.series.reduce((n, s) => n + s.buckets.filter((b) => b.count > 0).length, 0);
    }
    assert.ok(compared > 300, `${label}: only ${compared} non-empty buckets compared`);
  }

  /**
   * The local days (migrations/0024) after their incremental upkeep (the triggers' deletes, then
   * a pass building what is missing) equal a build from scratch, row for row, and every local day
   * with hours of the zones has its rows (the build left none out).
   */
  async function localDaysMatchRebuild(label: string) {
    const cols = `product_id, competitor_id, series, currency, zone, day, day_end, local_day, open_at, open_id, open,
                  close_at, close_id, close, min, max, count, total`;
    await buildAllLocalDays(t.rt.db, LOCAL_ZONES, { before: new Date() });
    const kept = await t.rt.db.query(
      `select ${cols} from price_local_days where account_id = $1 order by 1, 5, 6, 3, 4`,
      [accountId],
    );
    const diff = await t.rt.db.query<{ n: number }>(
      `with hours as (
         select h.product_id, z.zone, date_trunc('day', h.hour, z.zone) as day, count(distinct (h.series, h.currency)) as n
           from price_hours h, unnest($2::text[]) z (zone)
          where h.account_id = $1 and h.hour < now() - interval '1 day'
          group by 1, 2, 3
       ),
       built as (select product_id, zone, day, count(*) as n from price_local_days where account_id = $1 group by 1, 2, 3)
       select count(*)::int as n from ((select * from hours except select * from built)
                                       union all (select * from built except select * from hours)) d`,
      [accountId, LOCAL_ZONES],
    );
    assert.equal(Number(diff.rows[0]!.n), 0, `${label}: local days missing or too many`);
    await t.rt.db.query(`delete from price_local_days where account_id = $1`, [accountId]);
    await buildAllLocalDays(t.rt.db, LOCAL_ZONES, { before: new Date() });
    const fresh = await t.rt.db.query(
      `select ${cols} from price_local_days where account_id = $1 order by 1, 5, 6, 3, 4`,
      [accountId],
    );
    assert.ok(fresh.rows.length > 0, `${label}: no local days built`);
    assert.deepEqual(kept.rows, fresh.rows, `${label}: the local days kept differ from a rebuild`);
  }

  /** price_hours and price_days equal the aggregates of the raw rows by UTC hour and day, row for row. */
  async function hoursMatchRaw(label: string) {
    for (const [table, unit] of [
      ['price_hours', 'hour'],
      ['price_days', 'day'],
    ] as const) {
      const diff = await t.rt.db.query(
        `with raw as (
           select product_id, coalesce(competitor_id, '') as series, currency, date_trunc('${unit}', observed_at, 'UTC') as t,
                  (array_agg(id order by observed_at, id))[1] as open_id, (array_agg(price order by observed_at, id))[1] as open,
                  (array_agg(id order by observed_at desc, id desc))[1] as close_id,
                  (array_agg(price order by observed_at desc, id desc))[1] as close,
                  min(price) as min, max(price) as max, sum(samples)::bigint as count,
                  sum(coalesce(price_sum, price * samples)) as total
             from price_observations where account_id = $1
            group by 1, 2, 3, 4
         ),
         agg as (
           select product_id, series, currency, ${unit} as t, open_id, open, close_id, close, min, max, count, total
             from ${table} where account_id = $1
         )
         select * from ((select * from raw except select * from agg) union all (select * from agg except select * from raw)) d
         limit 5`,
        [accountId],
      );
      assert.deepEqual(diff.rows, [], `${label}: ${table} differs from the raw rows`);
    }
    await spansMatchRaw(label);
  }

  /**
   * price_days' trends columns (migrations/0018) equal the raw rows' figures: each observation's
   * span to the series' next one (any currency, any day) cut at the end of its UTC day.
   */
  async function spansMatchRaw(label: string) {
    const ms = (x: string) => `round(date_part('epoch', ${x}) * 1000)::bigint`;
    const diff = await t.rt.db.query(
      `with o as (
         select product_id, coalesce(competitor_id, '') as series, currency, date_trunc('day', observed_at, 'UTC') as day,
                id, price, in_stock, observed_at, coalesce(price_sum / samples, price) as mean,
                lead(observed_at) over (partition by product_id, competitor_id order by observed_at, id) as next_at
           from price_observations where account_id = $1
       ),
       s as (
         select *, (${ms(`least(coalesce(next_at, day + interval '24 hours'), day + interval '24 hours')`)} - ${ms('observed_at')}) * 1000 as us
           from o
       ),
       raw as (
         select product_id, series, currency, day as t,
                min(array[price::float8, -date_part('epoch', observed_at)]) filter (where in_stock is not false) as low,
                max(array[price::float8, date_part('epoch', observed_at)]) filter (where in_stock is not false) as high,
                min(price) filter (where in_stock is not false) as priced_min,
                coalesce(sum(us) filter (where in_stock is not false), 0) as priced_us,
                coalesce(sum(mean * us) filter (where in_stock is not false), 0) as priced_sum,
                count(*) filter (where in_stock is not false) as priced_n,
                coalesce(sum(mean) filter (where in_stock is not false), 0) as priced_means,
                coalesce(sum(us) filter (where in_stock = false), 0) as oos_us,
                coalesce(sum(us) filter (where in_stock is not null), 0) as known_us,
                (array_agg(in_stock order by observed_at desc, id desc))[1] as close_in_stock,
                (array_agg(mean order by observed_at desc, id desc))[1] as close_mean
           from s group by 1, 2, 3, 4
       ),
       agg as (
         select product_id, series, currency, day as t,
                case when low is not null then array[low::float8, -date_part('epoch', low_at)] end,
                case when high is not null then array[high::float8, date_part('epoch', high_at)] end,
                priced_min, priced_us::numeric, priced_sum, priced_n, priced_means, oos_us::numeric, known_us::numeric,
                close_in_stock, close_mean
           from price_days where account_id = $1
       )
       select * from ((select * from raw except select * from agg) union all (select * from agg except select * from raw)) d
       limit 5`,
      [accountId],
    );
    assert.deepEqual(diff.rows, [], `${label}: price_days' spans differ from the raw rows`);
    const n = await t.rt.db.query<{ n: number }>(
      `select count(*)::int as n from price_days where account_id = $1 and priced_us > 0 and oos_us > 0`,
      [accountId],
    );
    assert.ok(Number(n.rows[0]!.n) > 0, `${label}: no day with both priced and out-of-stock time`);
  }

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    comps = [await competitor(t, headers, 'A'), await competitor(t, headers, 'B'), await competitor(t, headers, 'C')];
    const all = [
      ...series(rand, null, false),
      ...series(rand, comps[0]!, true),
      ...series(rand, comps[1]!, false),
      ...series(rand, comps[2]!, false),
    ];
    // Most through POST /prices in batches of up to 500, in random order (so many arrive late,
    // before their series' latest); the rest straight into the table, a statement each (as a
    // check records its price), also late.
    const shuffled = shuffle(rand, all);
    const direct = shuffled.splice(0, Math.floor(shuffled.length / 5));
    for (let i = 0; i < shuffled.length; i += 500) {
      const batch = shuffled.slice(i, i + 500).map((o) => ({
        product_id: productId,
        ...(o.competitor ? { competitor_id: o.competitor } : {}),
        price: Number(o.price),
        currency: o.currency,
        in_stock: o.inStock,
        observed_at: o.at,
      }));
      const r = await ingestOk(t, headers, batch);
      assert.ok(r.data.every((x) => x.status === 201));
    }
    for (let i = 0; i < direct.length; i += 97) {
      await insertObservations(t, accountId, productId, direct.slice(i, i + 97));
    }
  });

  it('keeps price_hours and price_days equal to the aggregates of the raw rows through ingestion, late data included', async () => {
    await hoursMatchRaw('after ingestion');
  });

  it("rebuilds price_days' trends columns from the raw rows as migration 0018 does for existing days", async () => {
    await t.rt.db.transaction(async (tx) => {
      await tx.query(
        `update price_days set low = null, low_at = null, high = null, high_at = null, priced_min = null, priced_us = 0, priced_sum = 0,
                priced_n = 0, priced_means = 0, oos_us = 0, known_us = 0, close_in_stock = null, close_mean = null
          where account_id = $1`,
        [accountId],
      );
      // The migration's last statement.
      await tx.query(
        `select price_days_spans(array_agg(product_id), array_agg(series), array_agg(day)) from price_days`,
      );
    });
    await spansMatchRaw('after the rebuild');
  });

  it('answers every interval, zone and series filter exactly as the raw rows do', async () => {
    await compare('after ingestion');
  });

  it('answers day buckets in HISTORY_ZONES exactly from local days built, partly built and invalidated', async () => {
    const pass = await buildAllLocalDays(t.rt.db, LOCAL_ZONES, { before: new Date() });
    assert.ok(pass.rows > 0, JSON.stringify(pass));
    assert.equal((await buildAllLocalDays(t.rt.db, LOCAL_ZONES, { before: new Date() })).rows, 0, 'idempotent');
    await compare('local days built', 2);
    // Every third local day's rows gone: a mix of built days and days read from their hours.
    await t.rt.db.query(
      `delete from price_local_days where account_id = $1 and (local_day - date '2025-01-01') % 3 = 0`,
      [accountId],
    );
    await compare('local days partly built', 2);
    // Late rows into built days (and a delete): their days' rows go in the same statement.
    await ingestOk(t, headers, [
      { product_id: productId, price: 0.5, currency: 'EUR', observed_at: '2025-03-05T23:30:00.000Z' },
      {
        product_id: productId,
        competitor_id: comps[1],
        price: 77.25,
        currency: 'EUR',
        observed_at: '2025-03-20T04:15:00Z',
      },
    ]);
    await t.rt.db.query(
      `delete from price_observations where product_id = $1 and observed_at >= '2025-03-25T10:00:00Z' and observed_at < '2025-03-25T12:00:00Z'`,
      [productId],
    );
    await compare('local days after late rows and a delete', 2);
    await localDaysMatchRebuild('after late rows and a delete');
    await hoursMatchRaw('after late rows and a delete');
  });

  it('answers UTC day buckets exactly from month texts built, partly built and invalidated', async () => {
    const texts = async () =>
      (
        await t.rt.db.query<{ month: Date }>(
          `select distinct month from price_day_texts where product_id = $1 order by month`,
          [productId],
        )
      ).rows.map((r) => r.month.toISOString().slice(0, 7));
    const pass = await buildAllMonthTexts(t.rt.db, { before: new Date() });
    assert.ok(pass.rows > 0, JSON.stringify(pass));
    assert.deepEqual(await texts(), ['2025-02', '2025-03', '2025-04']);
    assert.equal((await buildAllMonthTexts(t.rt.db, { before: new Date() })).rows, 0, 'idempotent');
    await compareUtcDays('month texts built');
    // February's texts gone: February from its day rows, March from its texts.
    await t.rt.db.query(`delete from price_day_texts where product_id = $1 and month < '2025-03-01T00:00:00Z'`, [
      productId,
    ]);
    await compareUtcDays('month texts partly built');
    // A late row into March and a delete in February's last day: both months' texts go.
    await buildAllMonthTexts(t.rt.db, { before: new Date() });
    await ingestOk(t, headers, [
      {
        product_id: productId,
        competitor_id: comps[0],
        price: 3.125,
        currency: 'EUR',
        observed_at: '2025-03-11T04:15:00Z',
      },
    ]);
    await t.rt.db.query(
      `delete from price_observations where product_id = $1 and observed_at >= '2025-02-28T10:00:00Z' and observed_at < '2025-02-28T14:00:00Z'`,
      [productId],
    );
    assert.deepEqual(await texts(), ['2025-04']);
    await compareUtcDays('month texts after a late row and a delete');
    await buildAllMonthTexts(t.rt.db, { before: new Date() });
    assert.deepEqual(await texts(), ['2025-02', '2025-03', '2025-04']);
    await compareUtcDays('month texts built again');
    await hoursMatchRaw('after the month texts');
  });

  it('reads UTC days alone, and day buckets from hours unless the zone stays at UTC+0 over the range', () => {
    const source = (tz: string, interval: 'day' | 'week', from: string, to: string) =>
      defaultSource({ ...historyRange({ interval, tz, from, to }), interval });
    assert.equal(source('UTC', 'day', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), 'utcDays');
    assert.equal(source('Etc/UTC', 'day', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), 'utcDays');
    assert.equal(source('UTC', 'week', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), 'days');
    assert.equal(source('Europe/London', 'day', '2025-01-01T00:00:00Z', '2025-03-01T00:00:00Z'), 'days');
    assert.equal(source('Europe/London', 'day', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), 'hours');
    assert.equal(source('Europe/Berlin', 'day', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z'), 'hours');
    assert.equal(source('Asia/Kolkata', 'day', '2025-01-01T00:00:00Z', '2025-01-02T00:00:00Z'), 'hours');
    assert.equal(source('Europe/Berlin', 'week', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), 'days');
    const zoned = (tz: string, interval: 'day' | 'week') =>
      defaultSource(
        { ...historyRange({ interval, tz, from: '2025-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }), interval },
        LOCAL_ZONES,
      );
    assert.equal(zoned('Europe/Berlin', 'day'), 'localDays');
    assert.equal(zoned('Europe/Berlin', 'week'), 'days');
    assert.equal(zoned('Asia/Tokyo', 'day'), 'hours');
    assert.equal(zoned('UTC', 'day'), 'utcDays');
  });

  it('reads the aggregates where the buckets are whole UTC hours, the raw rows elsewhere', async () => {
    // Observations removed with every trigger off: the aggregates still hold them, the raw rows
    // do not, so the answers show which one each zone reads. Put back the same way afterwards.
    const q = (tz: string) => `from=2025-03-03T00:00:00Z&to=2025-03-10T00:00:00Z&interval=day&tz=${tz}`;
    const count = async (tz: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices?${q(tz)}`, headers });
      return res.json<PriceHistory>().series.reduce((n, s) => n + s.buckets.reduce((m, b) => m + b.count, 0), 0);
    };
    const before = { utc: await count('UTC'), kolkata: await count('Asia/Kolkata') };
    assert.ok(before.utc > 0);
    // One transaction each: session settings would not follow a pooled connection.
    const quietly = (sql: string) =>
      t.rt.db.transaction(async (tx) => {
        await tx.query(`set local session_replication_role = replica`);
        await tx.query(sql, [productId]);
      });
    await quietly(
      `create table hours_test_hidden as select * from price_observations
        where product_id = $1 and observed_at >= '2025-03-01' and observed_at < '2025-03-12'`,
    );
    await quietly(
      `delete from price_observations where product_id = $1 and observed_at >= '2025-03-01' and observed_at < '2025-03-12'`,
    );
    assert.equal(await count('UTC'), before.utc);
    assert.equal(await count('Asia/Kolkata'), 0);
    await quietly(`insert into price_observations select * from hours_test_hidden where product_id = $1`);
    await t.rt.db.query(`drop table hours_test_hidden`);
    assert.equal(await count('Asia/Kolkata'), before.kolkata);
    await hoursMatchRaw('after the hidden rows came back');
  });

  it('reads whole UTC days from price_days and only the hours around them from price_hours', async () => {
    // The hours of 2025-03-01..12 removed in a transaction that is rolled back: buckets made of
    // whole UTC days still count everything (days only), a day bucket in Berlin (no whole UTC
    // day in it) counts nothing in the range, a Berlin week counts its whole days only.
    const total = async (db: Queryable, interval: 'day' | 'week', tz: string) => {
      const q = historyQuery({
        ...historyRange({ interval, tz, from: '2025-03-03T00:00:00Z', to: '2025-03-10T00:00:00Z' }),
        interval,
        productId,
        accountId,
      });
      const rows = (await db.query<BucketRow>(q.text, q.values)).rows;
      return toSeries(rows).reduce((n, s) => n + s.buckets.reduce((m, b) => m + b.count, 0), 0);
    };
    const before = { utc: await total(t.rt.db, 'day', 'UTC'), week: await total(t.rt.db, 'week', 'Europe/Berlin') };
    assert.ok(before.utc > 0);
    const hidden = new Error('rolled back');
    await assert.rejects(
      t.rt.db.transaction(async (tx) => {
        await tx.query(
          `delete from price_hours where product_id = $1 and hour >= '2025-03-01' and hour < '2025-03-12'`,
          [productId],
        );
        assert.equal(await total(tx, 'day', 'UTC'), before.utc);
        assert.equal(await total(tx, 'week', 'UTC'), before.utc);
        assert.equal(await total(tx, 'day', 'Europe/Berlin'), 0);
        const week = await total(tx, 'week', 'Europe/Berlin');
        assert.ok(week > 0 && week < before.week, `${week} of ${before.week}`);
        throw hidden;
      }),
      hidden,
    );
    await hoursMatchRaw('after the hidden hours came back');
  });

  it('stays exact after the retention roll-up collapses old hours (and again after late arrivals into them)', async () => {
    const r = await rollupPrices(t.rt.db, { olderThanDays: 1 });
    assert.ok(r.deleted > 0, JSON.stringify(r));
    await hoursMatchRaw('after the roll-up');
    await compare('after the roll-up', 2);
    await ingestOk(t, headers, [
      { product_id: productId, price: 1.2345, currency: 'EUR', observed_at: '2025-03-10T10:00:00.000Z' },
      { product_id: productId, price: 999.5, currency: 'EUR', observed_at: '2025-03-10T10:59:59.999Z' },
      {
        product_id: productId,
        competitor_id: comps[0],
        price: 5,
        currency: 'USD',
        observed_at: '2025-03-12T00:00:00Z',
      },
    ]);
    await rollupPrices(t.rt.db, { olderThanDays: 1 });
    await hoursMatchRaw('after late arrivals rolled up');
    await compare('after late arrivals rolled up', 1);
    await localDaysMatchRebuild('after the roll-up');
    await compare('after the roll-up, local days rebuilt', 1);
  });

  it('stays exact when a competitor and its prices are deleted, and when retention drops whole months', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${comps[2]}`, headers });
    assert.equal(res.statusCode, 204, res.body);
    await hoursMatchRaw('after deleting a competitor');
    // The months the default partition took get partitions of their own (their hours move too).
    const made = await ensureObservationPartitions(t.rt.db, new Date(t.clock.now()));
    assert.ok(made.created.includes('price_observations_p202502'), JSON.stringify(made));
    await hoursMatchRaw('after the months left the default partition');
    const parts = await t.rt.db.query(
      `select to_regclass('price_hours_p202502')::text as h, to_regclass('price_days_p202502')::text as d`,
    );
    assert.deepEqual(parts.rows[0], { h: 'price_hours_p202502', d: 'price_days_p202502' });
    // Everything before 2025-03-15T10:00Z: February's partition dropped whole, March row by row.
    const out = await dropObservationsBefore(t.rt.db, new Date('2025-03-15T10:00:00Z'));
    assert.ok(out.dropped.includes('price_observations_p202502'), JSON.stringify(out));
    assert.ok(out.deleted > 0);
    const left = await t.rt.db.query(
      `select count(*)::int as n from price_hours where account_id = $1 and hour < '2025-03-15T10:00:00Z'`,
      [accountId],
    );
    assert.equal(Number(left.rows[0]!.n), 0);
    const leftDays = await t.rt.db.query(
      `select count(*)::int as n from price_days where account_id = $1 and day < '2025-03-15T00:00:00Z'`,
      [accountId],
    );
    assert.equal(Number(leftDays.rows[0]!.n), 0);
    await hoursMatchRaw('after retention');
    await compare('after retention', 1);
    await localDaysMatchRebuild('after retention');
    await compare('after retention, local days rebuilt', 1);
  });

  it('stays exact when batches arrive in order (merged into their days) with late rows among them', async () => {
    // Another product, a week of its series after the retention cut, ingested in time order in
    // batches of random size (crossing hours and midnights, some of one row), so most series-days
    // are merged (migrations/0019), not recomputed; some batches also carry rows held back from
    // earlier batches (late: their days recomputed in the same statement as others merged).
    // Every day has a row at its last millisecond and one at its first, the stock flipping
    // between them, and a competitor switches currency at midnight and within a day.
    const other = (await post(t, headers, '/api/v1/products', { name: 'Toaster', base_price: 30, currency: 'EUR' })).id;
    const day0 = Date.parse('2025-03-20T00:00:00Z');
    const rows: (Obs & { seq: number })[] = [];
    for (const [c, competitorId] of [null, comps[0]!, comps[1]!].entries()) {
      let price = 20 + c;
      let stock: boolean | null = true;
      for (let d = 0; d < 7; d++) {
        const instants = [day0 + d * 24 * H, day0 + (d + 1) * 24 * H - 1];
        for (let i = 0; i < 12; i++) instants.push(day0 + d * 24 * H + Math.floor(rand() * 24 * H));
        instants.sort((a, b) => a - b);
        for (const [i, ms] of instants.entries()) {
          if (rand() < 0.4) price = Math.max(0, price + (Math.floor(rand() * 41) - 20) / 4);
          if (i === 0 || i === instants.length - 1 || rand() < 0.15)
            stock = [true, false, null][Math.floor(rand() * 3)]!;
          // Competitor A switches to USD at a midnight, and back and forth within its second day.
          const currency = c === 1 && (d >= 3 || (d === 1 && i % 3 === 0)) ? 'USD' : 'EUR';
          const times = rand() < 0.1 ? 2 : 1; // ties at one instant: the id orders them
          for (let k = 0; k < times; k++)
            rows.push({
              competitor: competitorId,
              price: price.toFixed(4),
              at: new Date(ms).toISOString(),
              inStock: stock,
              currency,
              seq: rows.length,
            });
        }
      }
    }
    rows.sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.seq - b.seq);
    const held: typeof rows = [];
    let i = 0;
    while (i < rows.length) {
      const size = rand() < 0.2 ? 1 : 1 + Math.floor(rand() * 60);
      const batch = rows.slice(i, i + size);
      i += size;
      const late = rand() < 0.25 ? held.splice(0, held.length) : [];
      if (rand() < 0.1 && batch.length > 1) held.push(batch.pop()!);
      const all = [...batch, ...late];
      if (all.length === 0) continue;
      if (rand() < 0.3) {
        await insertObservations(t, accountId, other, all);
        continue;
      }
      const r = await ingestOk(
        t,
        headers,
        all.map((o) => ({
          product_id: other,
          ...(o.competitor ? { competitor_id: o.competitor } : {}),
          price: Number(o.price),
          currency: o.currency,
          in_stock: o.inStock,
          observed_at: o.at,
        })),
      );
      assert.ok(r.data.every((x) => x.status === 201));
    }
    if (held.length > 0) await insertObservations(t, accountId, other, held);
    await hoursMatchRaw('after in-order batches');
    // One day by hand, a statement a line: the predecessor's currency without a new row, a tie
    // with the day's last instant, a late row with an in-order one of another series.
    const day = (hhmm: string) => `2025-03-28T${hhmm}:00.000Z`;
    for (const rows of [
      [{ price: '10.0000', at: day('08:00'), inStock: true, currency: 'EUR' }],
      [{ price: '12.0000', at: day('09:00'), inStock: false, currency: 'USD' }],
      [
        { price: '11.0000', at: day('10:00'), inStock: null, currency: 'EUR' },
        { price: '13.0000', at: day('10:00'), inStock: true, currency: 'USD' },
      ],
      [{ price: '14.5000', at: day('10:00'), inStock: true, currency: 'USD' }],
      [
        { price: '9.0000', at: day('09:30'), inStock: true, currency: 'EUR' },
        { competitor: comps[1]!, price: '8.0000', at: day('23:59'), inStock: false, currency: 'EUR' },
      ],
      [{ price: '7.0000', at: day('23:59'), inStock: true, currency: 'USD' }],
    ] satisfies Obs[][]) {
      await insertObservations(t, accountId, other, rows);
      await hoursMatchRaw(`after ${JSON.stringify(rows)}`);
    }
  });
});
