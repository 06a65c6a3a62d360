import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { useTestApp } from '../helpers/app.js';
import { buildAllMonthTexts, buildMonthTexts } from '../../src/prices/history/month-texts.js';
import { monthTextsRun } from '../../src/prices/history/job.js';
import { monthPieces } from '../../src/prices/history/sql.js';
import { dropObservationsBefore, OBSERVATION_PARTITIONS } from '../../src/prices/partitions/index.js';
import { account, competitor, history, insertObservations, post, type Headers } from './history-support.js';

/**
 * Who builds the month texts of the UTC days (migrations/0025, docs/prices/HISTORY.md "Month
 * texts"), when the day rows' triggers drop them, and that the history reads them: the background
 * task's passes, only months that have ended, only the missing ones; a competitor's deletion and
 * retention's drop of a month. That the answers are the raw rows' is test/prices/hours.test.ts's.
 */

const MARCH = 'interval=day&from=2025-02-20T00:00:00Z&to=2025-04-05T00:00:00Z';

describe('history: the month texts of the UTC days', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let comp: string;
  const products: string[] = [];
  const silent = pino({ level: 'silent' });

  /** Each month text, as "product month series: text". */
  const texts = async () =>
    (
      await t.rt.db.query<{ d: string }>(
        `select d from (select product_id || ' ' || to_char(month at time zone 'UTC', 'YYYY-MM') || ' ' || series
                               || ': ' || buckets as d
                          from price_day_texts where account_id = $1) x
          order by d collate "C"`,
        [accountId],
      )
    ).rows.map((r) => r.d);
  /** The day since 1970-01-01 of a UTC date. */
  const epochDay = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

  before(async () => {
    let productId: string;
    ({ headers, accountId, productId } = await account(t));
    products.push(
      productId,
      (await post(t, headers, '/api/v1/products', { name: 'p1', base_price: 10, currency: 'EUR' })).id,
    );
    comp = await competitor(t, headers);
    for (const p of products)
      await insertObservations(t, accountId, p, [
        { competitor: comp, price: '10.0000', at: '2025-03-05T10:00:00Z' },
        { competitor: null, price: '11.5000', at: '2025-03-05T23:30:00Z' },
        { competitor: null, price: '12.0000', at: '2025-03-20T10:00:00Z' },
        { competitor: null, price: '13.0000', at: '2025-03-20T11:00:00Z' },
        { competitor: null, price: '9.0000', at: '2025-04-02T10:00:00Z' },
        // This month: never built.
        { competitor: comp, price: '13.0000', at: new Date(Date.now() - 1000).toISOString() },
      ]);
  });

  it('cuts a range into its whole UTC months and the days around them', () => {
    const d = (s: string) => new Date(`${s}T00:00:00Z`);
    const show = (start: string, end: string) =>
      monthPieces(d(start), d(end)).map(
        (x) => `${x.lo.toISOString().slice(0, 10)}..${x.hi.toISOString().slice(0, 10)}${x.whole ? ' whole' : ''}`,
      );
    assert.deepEqual(show('2025-02-20', '2025-04-05'), [
      '2025-02-20..2025-03-01',
      '2025-03-01..2025-04-01 whole',
      '2025-04-01..2025-04-05',
    ]);
    assert.deepEqual(show('2025-03-01', '2025-05-01'), [
      '2025-03-01..2025-04-01 whole',
      '2025-04-01..2025-05-01 whole',
    ]);
    assert.deepEqual(show('2025-03-02', '2025-03-31'), ['2025-03-02..2025-03-31']);
    assert.deepEqual(show('2024-12-15', '2025-01-01'), ['2024-12-15..2025-01-01']);
    assert.deepEqual(show('2024-12-01', '2025-01-02'), ['2024-12-01..2025-01-01 whole', '2025-01-01..2025-01-02']);
  });

  it('a pass builds the months that ended, one row per series, and a second one finds nothing to do', async () => {
    const pass = await buildAllMonthTexts(t.rt.db, { before: new Date(), batchProducts: 1 });
    assert.deepEqual(pass, { products: 2, rows: 6 });
    const [mar5, mar20, apr2] = ['2025-03-05', '2025-03-20', '2025-04-02'].map(epochDay);
    assert.deepEqual(
      await texts(),
      [...products].sort().flatMap((p) => [
        // Our own series on 20 March: two prices, their average, two observations.
        `${p} 2025-03 : ${mar5},11.5,,,,,1,${mar20},12,13,12,13,12.5,2`,
        `${p} 2025-03 ${comp}: ${mar5},10,,,,,1`,
        `${p} 2025-04 : ${apr2},9,,,,,1`,
      ]),
    );
    assert.equal((await buildAllMonthTexts(t.rt.db, { before: new Date() })).rows, 0);
  });

  it('never builds a month that has not ended, whatever instant it is given', async () => {
    assert.equal(await buildMonthTexts(t.rt.db, products, new Date(Date.now() + 40 * 86_400_000)), 0);
    const thisMonth = new Date().toISOString().slice(0, 7);
    assert.ok((await texts()).every((x) => !x.includes(` ${thisMonth} `)));
  });

  it("reads a whole month's texts, and the day rows of partial months and months without", async () => {
    const own = async (query = MARCH) => {
      const h = await history(t, headers, products[0]!, query);
      return h.series.find((s) => s.competitor_id === null)!.buckets.filter((b) => b.count > 0);
    };
    assert.deepEqual(
      (await own()).map((b) => [b.start, b.open]),
      [
        ['2025-03-05T00:00:00.000Z', 11.5],
        ['2025-03-20T00:00:00.000Z', 12],
        ['2025-04-02T00:00:00.000Z', 9],
      ],
    );
    // The text altered: the answer shows it, so it is what was read.
    await t.rt.db.query(
      `update price_day_texts set buckets = replace(buckets, ',11.5,', ',99,')
        where product_id = $1 and month = '2025-03-01T00:00:00Z' and series = ''`,
      [products[0]],
    );
    assert.equal((await own())[0]!.open, 99);
    // March partly inside the range: its day rows.
    assert.equal((await own('interval=day&from=2025-03-02T00:00:00Z&to=2025-04-05T00:00:00Z'))[0]!.open, 11.5);
    assert.equal((await own('interval=day&from=2025-03-05T00:00:00Z&to=2025-03-06T00:00:00Z'))[0]!.open, 11.5);
    // A day bucket in another zone reads no text.
    const berlin = await own('interval=day&tz=Europe/Berlin&from=2025-02-20T00:00:00Z&to=2025-04-05T00:00:00Z');
    assert.equal(berlin[0]!.open, 11.5);
    // A series filter reads the texts of its series.
    const filtered = await history(t, headers, products[0]!, `${MARCH}&competitor_id=own`);
    assert.equal(filtered.series.length, 1);
    assert.equal(filtered.series[0]!.buckets.find((b) => b.count > 0)!.open, 99);
    // Without March's texts: its day rows.
    await t.rt.db.query(`delete from price_day_texts where product_id = $1 and month = '2025-03-01T00:00:00Z'`, [
      products[0],
    ]);
    assert.equal((await own())[0]!.open, 11.5);
    await buildAllMonthTexts(t.rt.db, { before: new Date() });
    assert.equal((await own())[0]!.open, 11.5);
  });

  it('ingestion into this month keeps every text; a late observation drops its month, every series', async () => {
    const built = await texts();
    assert.equal(built.length, 6);
    await insertObservations(t, accountId, products[0]!, [
      { competitor: null, price: '14.0000', at: new Date().toISOString() },
    ]);
    assert.deepEqual(await texts(), built);
    await insertObservations(t, accountId, products[0]!, [
      { competitor: null, price: '8.0000', at: '2025-03-07T12:00:00Z' },
    ]);
    const gone = built.filter((d) => !d.startsWith(`${products[0]} 2025-03 `));
    assert.equal(gone.length, 4);
    assert.deepEqual(await texts(), gone);
    const h = await history(t, headers, products[0]!, MARCH);
    assert.equal(h.series.find((s) => s.competitor_id === null)!.buckets.find((b) => b.count > 0)!.open, 11.5);
    assert.equal(
      h.series.find((s) => s.competitor_id === null)!.buckets.find((b) => b.start === '2025-03-07T00:00:00.000Z')!.open,
      8,
    );
    // The task's first run passes over the whole history and builds March again, the late day in it.
    await monthTextsRun(t.rt.db, silent, t.clock)(new AbortController().signal);
    const now = await texts();
    assert.equal(now.length, 6);
    assert.ok(now.some((x) => x.startsWith(`${products[0]} 2025-03 : `) && x.includes(`${epochDay('2025-03-07')},8,`)));
    const state = await t.rt.db.query<{ task: string; cursor: string | null }>(
      `select task, cursor from task_passes where task = 'price-day-texts-full'`,
    );
    assert.deepEqual(state.rows, [{ task: 'price-day-texts-full', cursor: null }]);
  });

  it("a competitor's deletion drops the texts of the months its prices were in", async () => {
    const other = await competitor(t, headers, 'Other');
    await insertObservations(t, accountId, products[1]!, [
      { competitor: other, price: '30.0000', at: '2025-04-10T10:00:00Z' },
    ]);
    await buildAllMonthTexts(t.rt.db, { before: new Date() });
    assert.ok((await texts()).some((x) => x.includes(` 2025-04 ${other}: `)));
    const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${other}`, headers });
    assert.equal(res.statusCode, 204, res.body);
    const left = await texts();
    assert.ok(!left.some((x) => x.startsWith(`${products[1]} 2025-04 `)), left.join('\n'));
    assert.ok(left.some((x) => x.startsWith(`${products[1]} 2025-03 `)));
    const h = await history(t, headers, products[1]!, MARCH);
    assert.deepEqual(
      h.series.map((s) => s.competitor_id),
      [null, comp],
    );
  });

  it("retention's drop of a month takes its texts with it", async () => {
    for (const { table } of OBSERVATION_PARTITIONS.tables)
      await t.rt.db.query(
        `create table if not exists ${table}_p202502 partition of ${table}
           for values from ('2025-02-01T00:00:00Z') to ('2025-03-01T00:00:00Z')`,
      );
    const p = (await post(t, headers, '/api/v1/products', { name: 'p2', base_price: 10, currency: 'EUR' })).id;
    await insertObservations(t, accountId, p, [{ competitor: null, price: '5.0000', at: '2025-02-10T12:00:00Z' }]);
    await buildMonthTexts(t.rt.db, [p], new Date());
    assert.deepEqual(
      (await texts()).filter((x) => x.startsWith(p)),
      [`${p} 2025-02 : ${epochDay('2025-02-10')},5,,,,,1`],
    );
    const out = await dropObservationsBefore(t.rt.db, new Date('2025-03-01T00:00:00Z'));
    assert.ok(out.dropped.includes('price_observations_p202502'), JSON.stringify(out));
    const left = await t.rt.db.query(`select 1 from pg_class where relname = 'price_day_texts_p202502'`);
    assert.equal(left.rowCount, 0);
    assert.deepEqual(
      (await texts()).filter((x) => x.startsWith(p)),
      [],
    );
  });
});
