import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { rollupPrices } from '../../src/prices/rollup/index.js';
import { trendsQuery, type TrendsRow, type TrendsSource } from '../../src/prices/trends/sql.js';
import { account, competitor, insertObservations, type Headers, type Obs } from './history-support.js';
import { dropObservationsBefore, ensureObservationPartitions } from '../../src/prices/partitions/index.js';
import { setRate } from './trends-support.js';
import { lcg as prng, shuffle } from '../helpers/prng.js';
import { buildPriceBlocks } from '../../src/prices/trends/blocks.js';
import { buildPriceSpans, utcMidnight } from '../../src/prices/trends/spans.js';
import type { Queryable } from '../../src/db/types.js';

/**
 * The trends statement's exact arithmetic (docs/prices/TRENDS.md, "Exact arithmetic"): on
 * random data (our series and competitors', gaps of hours and days, ties at one instant, late
 * arrivals, a currency switch, stock true/false/unknown, rolled-up rows), at several instants
 * `now` (range edges inside days, on a day boundary, on an observation), every column of the
 * statement equals the float computation it replaced (test/fixtures/trends-float.sql, the
 * statement of main 8ea2c85), but for the last digit of a rounded average or share where the
 * float sum's rounding crossed a half (counted, and rare).
 */

const SEED = Number(process.env.TRENDS_SEED ?? 20261129);
const H = 3_600_000;
const D = 24 * H;
const START = Date.parse('2025-01-01T00:00:00Z');
/** 100 days: the 30- and 90-day ranges start inside the data at most instants below. */
const DAYS = 100;
const FLOAT = readFileSync(new URL('../fixtures/trends-float.sql', import.meta.url), 'utf8');

function series(rand: () => number, competitorId: string | null, switchesCurrency: boolean): Obs[] {
  const out: Obs[] = [];
  let price = 10 + Math.floor(rand() * 400) / 4;
  let stock: boolean | null = true;
  for (let h = 0; h < DAYS * 24; h++) {
    if (rand() < 0.9) continue; // a gap hour
    if (h % 24 === 0 && rand() < 0.1) {
      h += 24 * Math.floor(1 + rand() * 3) - 1; // gap days
      continue;
    }
    const n = 1 + Math.floor(rand() * 3);
    let last: string | undefined;
    for (let i = 0; i < n; i++) {
      if (rand() < 0.4) price = Math.max(0, price + (Math.floor(rand() * 81) - 40) / 4 + (rand() < 0.3 ? 0.0001 : 0));
      if (rand() < 0.1) stock = [true, false, null][Math.floor(rand() * 3)]!;
      const at =
        last !== undefined && rand() < 0.15 ? last : new Date(START + h * H + Math.floor(rand() * H)).toISOString();
      last = at;
      out.push({
        competitor: competitorId,
        price: price.toFixed(4),
        at,
        inStock: stock,
        currency: switchesCurrency && h > DAYS * 8 && h < DAYS * 12 ? 'USD' : 'EUR',
      });
    }
  }
  return out;
}

describe(`trends with exact arithmetic (seed ${SEED})`, () => {
  const t = useTestApp();
  let accountId: string;
  let productId: string;
  let headers: Headers;
  let comps: string[];
  const rand = prng(SEED);
  let all: Obs[] = [];

  /** The instants asked at: random ones, a UTC midnight, an observation's instant, past the data. */
  function instants(): Date[] {
    const out = [
      new Date(START + 70 * D),
      new Date(all[Math.floor(rand() * all.length)]!.at),
      new Date(START + (DAYS + 20) * D + 123),
    ];
    for (let i = 0; i < 2; i++) out.push(new Date(START + 20 * D + Math.floor(rand() * (DAYS - 15) * D)));
    return out;
  }

  /** The statement's rows at `now`, by series, from the raw rows or the daily aggregates. */
  async function exact(now: Date, source: TrendsSource): Promise<TrendsRow[]> {
    const q = trendsQuery(accountId, productId, { now, source });
    return (await t.rt.db.query<TrendsRow>(q.text, q.values)).rows;
  }

  async function float(now: Date): Promise<TrendsRow[]> {
    return (await t.rt.db.query<TrendsRow>(FLOAT, [accountId, productId, now.toISOString()])).rows;
  }

  /** Rows of one series at one instant, comparable as a whole (Dates as instants). */
  const plain = (rows: TrendsRow[]) => JSON.parse(JSON.stringify(rows)) as Record<string, unknown>[];

  /**
   * At every instant: the answer from the daily aggregates equals the raw computation's, every
   * column; with `withFloat`, the raw one also equals the float statement's, but for the last
   * digit of a rounded average or share where the float sum's rounding crossed a half
   * (counted: it must stay rare).
   */
  async function compare(label: string, withFloat: boolean): Promise<void> {
    let lastDigit = 0;
    let compared = 0;
    let days = 0;
    // The blocks and spans as the steps before left them (built, then dropped by the day rows
    // they touched), then every missing block built, then the spans of the instant's midnight:
    // each read as the raw rows.
    const steps = ['blocks and spans as left', 'every block built', 'the spans of its midnight built'];
    for (const now of instants()) {
      const raw = await exact(now, 'raw');
      for (const step of steps) {
        if (step === steps[1]) await buildBlocks();
        if (step === steps[2]) assert.ok((await buildSpans(utcMidnight(now.getTime()))) >= 0);
        const fromDays = await exact(now, 'days');
        assert.deepEqual(
          plain(fromDays),
          plain(raw),
          `${label} at ${now.toISOString()}: days differ from raw (${step})`,
        );
      }
      days += raw.filter((r) => r.avg_30 !== null).length;
      if (!withFloat) continue;
      const want = await float(now);
      assert.equal(raw.length, want.length, label);
      for (let i = 0; i < raw.length; i++) {
        const g = { ...raw[i]! } as Record<string, unknown>;
        const w = { ...want[i]! } as Record<string, unknown>;
        for (const k of Object.keys(w)) {
          if (!/^(avg|oos)_/.test(k) || g[k] === w[k] || g[k] === null || w[k] === null) continue;
          const diff = Math.abs(Number(g[k]) - Number(w[k]));
          assert.ok(
            diff <= 0.0001 + 1e-12,
            `${label} at ${now.toISOString()}: ${k} ${String(g[k])} vs ${String(w[k])}`,
          );
          lastDigit++;
          g[k] = w[k];
        }
        assert.deepEqual(g, w, `${label} at ${now.toISOString()}, series ${String(w.series)}`);
        compared += Object.keys(w).filter((k) => /^(avg|oos)_/.test(k) && w[k] !== null).length;
      }
    }
    assert.ok(days >= 8, `${label}: only ${days} series with a 30-day average compared`);
    await carriesKept(label);
    await blocksKept(label);
    await spansKept(label);
    if (withFloat) {
      assert.ok(compared > 60, `${label}: only ${compared} averages and shares compared`);
      assert.ok(lastDigit * 50 < compared, `${label}: ${lastDigit} of ${compared} differ in the last digit`);
    }
  }

  /** Kept carries whose previous day is older than their series' oldest day row (left by retention). */
  const STALE = `d.prev_day < (select min(m.day) from price_days m where m.product_id = d.product_id and m.account_id = d.account_id and m.series = d.series)`;

  /**
   * The days' carries kept by the triggers (migrations/0021: each day's opening row holds the
   * previous day row's closing state) equal a rebuild of them from scratch, row for row, once
   * those the trends statement ignores (STALE, its k_ok) are taken as none.
   */
  async function carriesKept(label: string): Promise<void> {
    const carries = `select product_id, series, day, currency, prev_day, prev_currency, prev_in_stock, prev_mean::text
                       from price_days where account_id = $1 order by product_id, series, day, currency`;
    const read = `select product_id, series, day, currency,
                         ${['prev_day', 'prev_currency', 'prev_in_stock', 'prev_mean::text']
                           .map((c) => `case when ${STALE} then null else d.${c} end as ${c.replace('::text', '')}`)
                           .join(', ')}
                    from price_days d where account_id = $1 order by product_id, series, day, currency`;
    const kept = plain((await t.rt.db.query(read, [accountId])).rows as never);
    const rebuilt = new Error('rolled back');
    await assert.rejects(
      t.rt.db.transaction(async (tx) => {
        await tx.query(`select price_days_carries_rebuild($1)`, [accountId]);
        const want = plain((await tx.query(carries, [accountId])).rows as never);
        assert.ok(
          want.some((r) => r.prev_day !== null),
          `${label}: no carry at all`,
        );
        assert.deepEqual(kept, want, `${label}: the days' carries differ from a rebuild`);
        throw rebuilt;
      }),
      rebuilt,
    );
  }

  /** Builds every missing block of the account's products that ended before today (the background task's work). */
  async function buildBlocks(): Promise<number> {
    const ids = (await t.rt.db.query<{ id: string }>(`select id from products where account_id = $1`, [accountId]))
      .rows;
    return buildPriceBlocks(
      t.rt.db,
      ids.map((r) => r.id),
      new Date(),
    );
  }

  const BLOCKS = `select product_id, series, currency, block, block_end, last_day, priced_us::text, priced_sum::text,
                         priced_n::text, priced_means::text, lo, hi, count::text, oos_us::text, known_us::text, open_at,
                         min::text, max::text, priced_min::text, prev_day, prev_currency, prev_in_stock,
                         prev_mean::text, k_us::text, k_sum::text, k_oos::text, k_known::text
                    from price_blocks where account_id = $1 order by product_id, block, series, currency`;

  /**
   * The blocks kept (built, dropped by the day rows' triggers, the missing ones built again) equal
   * blocks built from scratch from the day rows now, row for row.
   */
  async function blocksKept(label: string): Promise<void> {
    await buildBlocks();
    const kept = plain((await t.rt.db.query(BLOCKS, [accountId])).rows as never);
    assert.ok(kept.length > 0, `${label}: no block built`);
    const rebuilt = new Error('rolled back');
    await assert.rejects(
      t.rt.db.transaction(async (tx) => {
        await tx.query(`delete from price_blocks where account_id = $1`, [accountId]);
        const ids = (await tx.query<{ id: string }>(`select id from products where account_id = $1`, [accountId])).rows;
        await buildPriceBlocks(
          tx,
          ids.map((r) => r.id),
          new Date(),
        );
        assert.deepEqual(
          kept,
          plain((await tx.query(BLOCKS, [accountId])).rows as never),
          `${label}: blocks differ from a rebuild`,
        );
        throw rebuilt;
      }),
      rebuilt,
    );
  }

  /** Builds the spans (migrations/0027) of the account's products for the midnight `d1` (the background task's work). */
  async function buildSpans(d1: Date, db: Queryable = t.rt.db): Promise<number> {
    const ids = (await db.query<{ id: string }>(`select id from products where account_id = $1`, [accountId])).rows;
    return buildPriceSpans(
      db,
      ids.map((r) => r.id),
      d1,
    );
  }

  const SPANS = `select product_id, d1, series, currency, first_day, block, block_end, last_day, priced_us::text,
                        priced_sum::text, priced_n::text, priced_means::text, lo, hi, count::text, oos_us::text,
                        known_us::text, open_at, min::text, max::text, priced_min::text, prev_day, prev_currency,
                        prev_in_stock, prev_mean::text, k_us::text, k_sum::text, k_oos::text, k_known::text,
                        run_price::text, pre_run_day, low_days::text, low_mins::text
                   from price_spans where account_id = $1 order by product_id, d1, block, series, currency`;

  /**
   * The spans kept (built, dropped by the day rows' triggers and by retention) equal spans built
   * from scratch from the day rows now for the same midnights, row for row (the latest midnight
   * first: a build drops a product's spans of midnights before its previous one).
   */
  async function spansKept(label: string): Promise<void> {
    const kept = plain((await t.rt.db.query(SPANS, [accountId])).rows as never);
    const d1s = [...new Set(kept.map((r) => String(r.d1)))].sort().reverse();
    const rebuilt = new Error('rolled back');
    await assert.rejects(
      t.rt.db.transaction(async (tx) => {
        await tx.query(`delete from price_spans where account_id = $1`, [accountId]);
        for (const d1 of d1s) await buildSpans(new Date(d1), tx);
        assert.deepEqual(
          kept,
          plain((await tx.query(SPANS, [accountId])).rows as never),
          `${label}: spans differ from a rebuild`,
        );
        throw rebuilt;
      }),
      rebuilt,
    );
  }

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    comps = [await competitor(t, headers, 'A'), await competitor(t, headers, 'B'), await competitor(t, headers, 'C')];
    await setRate(t, accountId, 'USD', 'EUR', '0.9');
    all = [
      ...series(rand, null, false),
      ...series(rand, comps[0]!, true),
      ...series(rand, comps[1]!, false),
      ...series(rand, comps[2]!, false),
    ];
    // In random order, a statement per 300 rows: most arrive late, before their series' latest.
    const shuffled = shuffle(rand, all);
    for (let i = 0; i < shuffled.length; i += 300) {
      await insertObservations(t, accountId, productId, shuffled.slice(i, i + 300));
    }
  });

  it('answers from the daily aggregates as from the raw rows, and as the float computation did, after ingestion with late data', async () => {
    await compare('after ingestion', true);
  });

  it('reads the daily aggregates inside the ranges and the raw rows only at their edges', async () => {
    // In a transaction rolled back: the raw rows of days well inside the 90-day range removed
    // with every trigger off change the raw answer, not the one from the days; a day row's
    // weighted sum changed changes the one from the days only once its block row is gone.
    const now = new Date(START + 95 * D + 5 * H);
    // The ranges' figures (the searches for price_since and cheaper_until may read raw days anywhere).
    const ranges = (rows: Record<string, unknown>[]) =>
      rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => /^(avg|low|high|n|oos)_\d+$/.test(k))));
    const before = { raw: ranges(plain(await exact(now, 'raw'))), days: ranges(plain(await exact(now, 'days'))) };
    const hidden = new Error('rolled back');
    await assert.rejects(
      t.rt.db.transaction(async (tx) => {
        const run = async (source: TrendsSource) => {
          const q = trendsQuery(accountId, productId, { now, source });
          return ranges(plain((await tx.query<TrendsRow>(q.text, q.values)).rows));
        };
        await tx.query(`set local session_replication_role = replica`);
        const gone = await tx.query(
          `delete from price_observations where product_id = $1 and observed_at >= $2 and observed_at < $3`,
          [productId, new Date(START + 30 * D).toISOString(), new Date(START + 40 * D).toISOString()],
        );
        assert.ok(gone.rowCount > 10);
        assert.notDeepEqual(await run('raw'), before.raw);
        assert.deepEqual(await run('days'), before.days);
        assert.ok((await buildSpans(utcMidnight(now.getTime()), tx)) > 0, 'spans built');
        const changed = await tx.query(
          `update price_days set priced_sum = priced_sum * 2 + 1e15 where product_id = $1 and day >= $2 and day < $3`,
          [productId, new Date(START + 33 * D).toISOString(), new Date(START + 38 * D).toISOString()],
        );
        assert.ok(changed.rowCount > 0);
        // Those days lie in a span and in blocks read whole (built by the comparisons before, and
        // the day rows' triggers are off): the span rows answer for them, then the block rows,
        // until they go too.
        assert.deepEqual(await run('days'), before.days);
        const spans = await tx.query(`delete from price_spans where product_id = $1`, [productId]);
        assert.ok(spans.rowCount > 0);
        assert.deepEqual(await run('days'), before.days);
        const blocks = await tx.query(
          `delete from price_blocks where product_id = $1 and block_end > $2 and block < $3`,
          [productId, new Date(START + 33 * D).toISOString(), new Date(START + 38 * D).toISOString()],
        );
        assert.ok(blocks.rowCount > 0);
        assert.notDeepEqual(await run('days'), before.days);
        throw hidden;
      }),
      hidden,
    );
  });

  it('stays exact after late arrivals: same day as their predecessor, earlier days, another currency, out of stock', async () => {
    const late = (at: number, price: string, extra: Partial<Obs> = {}): Obs => ({
      competitor: null,
      price,
      at: new Date(at).toISOString(),
      inStock: true,
      currency: 'EUR',
      ...extra,
    });
    await insertObservations(t, accountId, productId, [
      late(START + 50 * D + 3 * H + 17, '1.2345'),
      late(START + 50 * D + 23 * H + 59 * 60_000, '999.5', { inStock: false }),
      late(START + 61 * D + 12 * H, '12.3456', { competitor: comps[0]!, currency: 'USD' }),
      late(START + 61 * D + 12 * H, '12.3457', { competitor: comps[0]!, inStock: null }),
      late(START + 88 * D + 30_000, '0', { competitor: comps[1]! }),
    ]);
    // A priced observation whose span is empty (out of stock at the same instant, a later id):
    // the 30-day average falls back to the mean of the priced prices held, without time.
    const d = await competitor(t, headers, 'D');
    await insertObservations(t, accountId, productId, [
      late(START + 80 * D + 7, '7.5', { competitor: d }),
      late(START + 80 * D + 7, '8', { competitor: d, inStock: false }),
    ]);
    const q = trendsQuery(accountId, productId, { now: new Date(START + 95 * D), source: 'days' });
    const row = (await t.rt.db.query<TrendsRow>(q.text, q.values)).rows.find((r) => r.competitor_id === d);
    assert.equal(row?.avg_30, '7.5000');
    await compare('after late arrivals', false);
  });

  it('stays exact over rolled-up rows (mean prices of many samples)', async () => {
    const r = await rollupPrices(t.rt.db, { olderThanDays: 0, now: START + 60 * D });
    assert.ok(r.deleted > 0, JSON.stringify(r));
    await compare('after the roll-up', true);
  });

  it('stays exact when a competitor is deleted and retention drops whole months', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${comps[2]}`, headers });
    assert.equal(res.statusCode, 204, res.body);
    await ensureObservationPartitions(t.rt.db, new Date(t.clock.now()));
    const out = await dropObservationsBefore(t.rt.db, new Date(START + 45 * D + 10 * H));
    assert.ok(out.dropped.includes('price_observations_p202501'), JSON.stringify(out));
    await compare('after retention', false);
    // A cutoff on a month's first instant: the month goes whole and no row is deleted after it.
    // Stopped right after the detach, before the spans holding its days go: the statement sees
    // by the series' oldest day rows that they are stale, and reads the blocks and day rows.
    const at = new Date(START + 95 * D + 7 * H);
    assert.ok((await buildSpans(utcMidnight(at.getTime()))) > 0);
    let detached = false;
    const whole = await dropObservationsBefore(t.rt.db, new Date('2025-03-01T00:00:00Z'), {
      onDetached: () => (detached = true),
      stop: () => detached,
    });
    assert.deepEqual([whole.dropped, whole.deleted], [['price_observations_p202502'], 0]);
    const staleSpans = `select count(*) as n from price_spans where account_id = $1 and first_day < '2025-03-01'`;
    assert.ok(Number((await t.rt.db.query<{ n: string }>(staleSpans, [accountId])).rows[0]!.n) > 0);
    assert.deepEqual(plain(await exact(at, 'days')), plain(await exact(at, 'raw')), 'stale spans read');
    // The next run deletes them.
    await dropObservationsBefore(t.rt.db, new Date('2025-03-01T00:00:00Z'));
    assert.equal(Number((await t.rt.db.query<{ n: string }>(staleSpans, [accountId])).rows[0]!.n), 0);
    // The first day rows after it still hold carries from February, which the statement ignores.
    const stale = await t.rt.db.query<{ n: number | string }>(
      `select count(*) as n from price_days d where d.account_id = $1 and ${STALE}`,
      [accountId],
    );
    assert.ok(Number(stale.rows[0]!.n) > 0, 'no carry left pointing into the dropped month');
    await compare('after retention of a whole month', false);
  });

  it("keeps the days' carries through in-order days, a day put between two, deletes and updates", async () => {
    // migrations/0021: an in-order row into the series' latest day skips the carries; a new day,
    // a day between two existing ones, a day emptied by a delete and a stock changed by an
    // update each move the carry held by the next day row.
    const g = await competitor(t, headers, 'G');
    const at = (d: number, h: number) => new Date(START + d * D + h * H).toISOString();
    const obs = (d: number, h: number, price: string, extra: Partial<Obs> = {}): Obs => ({
      competitor: g,
      price,
      at: at(d, h),
      inStock: true,
      ...extra,
    });
    for (const [d, h] of [
      [60, 1],
      [60, 5],
      [61, 2],
      [61, 20],
      [64, 3],
      [70, 4],
      [70, 9],
    ] as const)
      await insertObservations(t, accountId, productId, [obs(d, h, (20 + h).toFixed(4))]);
    await carriesKept('in-order days');
    await insertObservations(t, accountId, productId, [obs(62, 22, '18.5000', { inStock: false })]);
    await insertObservations(t, accountId, productId, [obs(67, 1, '19.0000', { currency: 'USD' })]);
    await carriesKept('days put between two');
    await t.rt.db.query(
      `delete from price_observations where competitor_id = $1 and observed_at >= $2 and observed_at < $3`,
      [g, at(64, 0), at(65, 0)],
    );
    await t.rt.db.query(`update price_observations set in_stock = null where competitor_id = $1 and observed_at = $2`, [
      g,
      at(61, 20),
    ]);
    await compare('after deletes and updates', false);
  });

  it("stays exact when days without observations span the ranges' first midnights and days mix currencies", async () => {
    // The statement from the days takes the observation before an edge from the closing row of
    // an earlier day, and sums a carry into the band of whole days it lies in (docs/prices/TRENDS.md,
    // "Trends from aggregates"): gaps of days across d0 of the 30- and 90-day ranges and the
    // 7-day period's instant, and days whose currencies open and close in another order.
    const e = await competitor(t, headers, 'E');
    const gaps = [
      [38 * D + 3 * H, 44 * D + 2 * H],
      [97 * D + 20 * H, 104 * D + H],
      [121 * D, 124 * D],
    ];
    const rows: Obs[] = [];
    let price = 50;
    for (let at = 33 * D + 17 * 60_000; at < 125 * D; at += 5 * H + 7 * 60_000) {
      if (gaps.some(([from, to]) => at >= from! && at < to!)) continue;
      price = Math.max(1, price + (Math.floor(rand() * 9) - 4) / 2);
      const stock = [true, true, true, false, null][Math.floor(rand() * 5)]!;
      rows.push({ competitor: e, price: price.toFixed(4), at: new Date(START + at).toISOString(), inStock: stock });
    }
    // Two days where USD opens first and EUR closes last, one of them a range's start day.
    for (const d of [50, 100]) {
      rows.push(
        { competitor: e, price: '40.1000', currency: 'USD', at: new Date(START + d * D + 1_000).toISOString() },
        {
          competitor: e,
          price: '41.5000',
          currency: 'USD',
          at: new Date(START + d * D + 4 * H).toISOString(),
          inStock: false,
        },
        { competitor: e, price: '39.2500', at: new Date(START + d * D + 23 * H + 59 * 60_000).toISOString() },
      );
    }
    // More than a year of history: the carries are read from the day before the 365-day range's
    // start day on, and from the days price_since needs (F's last change is that old).
    const f = await competitor(t, headers, 'F');
    for (let d = -400; d < 125; d += d < -390 || d >= 33 ? 1 : 423) {
      rows.push({ competitor: e, price: (45 + (d % 3)).toFixed(4), at: new Date(START + d * D + 9 * H).toISOString() });
      rows.push({
        competitor: f,
        price: d < -395 ? '30.0000' : '31.0000',
        at: new Date(START + d * D + 13 * H).toISOString(),
      });
    }
    await insertObservations(t, accountId, productId, shuffle(rand, rows));
    for (const at of [130 * D + 5 * H, 124 * D + 12 * H, 101 * D + 3 * H, 100 * D + 2 * H, 60 * D, -100 * D]) {
      const now = new Date(START + at);
      const raw = await exact(now, 'raw');
      assert.ok(raw.some((r) => r.competitor_id === e && r.avg_30 !== null));
      assert.deepEqual(plain(await exact(now, 'days')), plain(raw), `gaps at ${now.toISOString()}`);
      await buildBlocks();
      assert.deepEqual(plain(await exact(now, 'days')), plain(raw), `gaps at ${now.toISOString()}, blocks built`);
      // F's price has not changed since day -395: price_since's day is found in a span's closing run.
      assert.ok((await buildSpans(utcMidnight(now.getTime()))) > 0);
      assert.deepEqual(plain(await exact(now, 'days')), plain(raw), `gaps at ${now.toISOString()}, spans built`);
    }
    await blocksKept('gaps');
    await spansKept('gaps');
  });
});
