import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { useTestApp } from '../helpers/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { buildAllLocalDays, buildLocalDays } from '../../src/prices/history/local-days.js';
import { localDaysRun } from '../../src/prices/history/job.js';
import { dropObservationsBefore, OBSERVATION_PARTITIONS } from '../../src/prices/partitions/index.js';
import { account, competitor, history, insertObservations, post, type Headers } from './history-support.js';

/**
 * Who builds the local days of HISTORY_ZONES (migrations/0024, docs/prices/HISTORY.md "Day buckets
 * away from UTC"), when the hour rows' triggers drop them, and that the history reads them: the
 * background task's passes, only local days that have ended, only the missing ones; retention's
 * drop of a month takes the local days reaching into it. That the answers are the raw rows' is
 * test/prices/hours.test.ts's.
 */

const DAY = 86_400_000;
const ZONES = ['America/New_York', 'Europe/Berlin'];

describe('history: the local days of HISTORY_ZONES', () => {
  const t = useTestApp({ HISTORY_ZONES: 'Europe/Berlin, America/New_York' });
  let headers: Headers;
  let accountId: string;
  const products: string[] = [];

  /** Each local day built, as "product zone date series". */
  const localDays = async () =>
    (
      await t.rt.db.query<{ d: string }>(
        `select d from (select product_id || ' ' || zone || ' ' || local_day::text || ' ' || series as d
                          from price_local_days where account_id = $1) x
          order by d collate "C"`,
        [accountId],
      )
    ).rows.map((r) => r.d);
  const silent = pino({ level: 'silent' });

  before(async () => {
    let productId: string;
    ({ headers, accountId, productId } = await account(t));
    products.push(
      productId,
      (await post(t, headers, '/api/v1/products', { name: 'p1', base_price: 10, currency: 'EUR' })).id,
    );
    const comp = await competitor(t, headers);
    for (const p of products)
      await insertObservations(t, accountId, p, [
        { competitor: comp, price: '10.0000', at: '2025-03-05T10:00:00Z' },
        // Berlin's 6 March, New York's 5 March.
        { competitor: null, price: '11.0000', at: '2025-03-05T23:30:00Z' },
        { competitor: null, price: '12.0000', at: '2025-03-20T10:00:00Z' },
        // Today's local day in every zone: never built.
        { competitor: comp, price: '13.0000', at: new Date(Date.now() - 1000).toISOString() },
      ]);
  });

  it('HISTORY_ZONES: canonical names, once each; zones of other offsets than whole hours refused', () => {
    assert.deepEqual(loadConfig({}).historyZones, []);
    assert.deepEqual(
      loadConfig({ HISTORY_ZONES: 'Europe/Berlin, America/New_York,Europe/Berlin' }).historyZones,
      ZONES,
    );
    assert.deepEqual(loadConfig({ HISTORY_ZONES: 'US/Eastern' }).historyZones, ['America/New_York']);
    for (const [value, message] of [
      ['Asia/Kolkata', /Asia\/Kolkata's offset from UTC is not a whole number of hours/],
      // -4:30 from 2007 to 2016.
      ['Europe/Berlin,America/Caracas', /America\/Caracas's offset/],
      ['Mars/Olympus', /"Mars\/Olympus" is not an IANA time zone name/],
      ['UTC', /UTC days need no cache/],
    ] as const)
      assert.throws(
        () => loadConfig({ HISTORY_ZONES: value }),
        (e: unknown) => e instanceof ConfigError && e.variable === 'HISTORY_ZONES' && message.test(e.message),
        value,
      );
  });

  it('a pass builds the local days that ended in every zone, and a second one finds nothing to do', async () => {
    const pass = await buildAllLocalDays(t.rt.db, ZONES, { before: new Date(), batchProducts: 1 });
    assert.deepEqual(pass, { products: 2, rows: 12 });
    const comp = (await t.rt.db.query<{ id: string }>(`select id from competitors where account_id = $1`, [accountId]))
      .rows[0]!.id;
    assert.deepEqual(
      await localDays(),
      [...products]
        .sort()
        .flatMap((p) => [
          `${p} America/New_York 2025-03-05 `,
          `${p} America/New_York 2025-03-05 ${comp}`,
          `${p} America/New_York 2025-03-20 `,
          `${p} Europe/Berlin 2025-03-05 ${comp}`,
          `${p} Europe/Berlin 2025-03-06 `,
          `${p} Europe/Berlin 2025-03-20 `,
        ])
        .sort(),
    );
    assert.equal((await buildAllLocalDays(t.rt.db, ZONES, { before: new Date() })).rows, 0);
  });

  it('never builds a local day that has not ended an hour before, whatever instant it is given', async () => {
    assert.equal(await buildLocalDays(t.rt.db, ZONES, products, new Date(Date.now() + 30 * DAY)), 0);
    assert.equal((await localDays()).length, 12);
  });

  it("reads a built local day's rows, and the hours of a day without", async () => {
    const query = 'interval=day&tz=Europe/Berlin&from=2025-03-05T00:00:00Z&to=2025-03-07T00:00:00Z';
    const own = async (tz = 'Europe/Berlin') => {
      const h = await history(t, headers, products[0]!, query.replace('Europe/Berlin', tz));
      return h.series.find((s) => s.competitor_id === null)!.buckets.find((b) => b.count > 0)!;
    };
    assert.equal((await own()).open, 11);
    // The row altered: the answer shows it, so it is what was read (Tokyo's days are hours).
    await t.rt.db.query(
      `update price_local_days set open = 99, close = 99, min = 99, max = 99, total = 99 * count
        where product_id = $1 and zone = 'Europe/Berlin' and local_day = '2025-03-06' and series = ''`,
      [products[0]],
    );
    assert.equal((await own()).open, 99);
    assert.equal((await own('Asia/Tokyo')).open, 11);
    await t.rt.db.query(
      `delete from price_local_days where product_id = $1 and zone = 'Europe/Berlin' and local_day = '2025-03-06'`,
      [products[0]],
    );
    assert.equal((await own()).open, 11);
  });

  it('ingestion into the current hour keeps every local day; a late observation drops its day in every zone', async () => {
    await buildAllLocalDays(t.rt.db, ZONES, { before: new Date() });
    const built = await localDays();
    assert.equal(built.length, 12);
    await insertObservations(t, accountId, products[0]!, [
      { competitor: null, price: '14.0000', at: new Date().toISOString() },
    ]);
    assert.deepEqual(await localDays(), built);
    // 12:00 UTC on 5 March: Berlin's and New York's 5 March, both series' rows.
    await insertObservations(t, accountId, products[0]!, [
      { competitor: null, price: '9.0000', at: '2025-03-05T12:00:00Z' },
    ]);
    const gone = built.filter((d) => !(d.startsWith(products[0]!) && d.includes(' 2025-03-05 ')));
    assert.equal(gone.length, 9);
    assert.deepEqual(await localDays(), gone);
    // The task's first run passes over the whole history.
    await localDaysRun(t.rt.db, ZONES, silent, t.clock)(new AbortController().signal);
    // Our own series has a row on Berlin's 5 March now.
    assert.deepEqual(await localDays(), [...built, `${products[0]} Europe/Berlin 2025-03-05 `].sort());
    const state = await t.rt.db.query<{ task: string; cursor: string | null }>(
      `select task, cursor from task_passes where task like 'price-local-days-full%'`,
    );
    assert.deepEqual(state.rows, [{ task: 'price-local-days-full:America/New_York,Europe/Berlin', cursor: null }]);
  });

  it("retention's drop of a month deletes the local days reaching into it from before", async () => {
    // February 2025 in partitions of its own, January in the default ones: New York's 31 January
    // and Berlin's 1 February start in January and end in February.
    for (const { table } of OBSERVATION_PARTITIONS.tables)
      await t.rt.db.query(
        `create table if not exists ${table}_p202502 partition of ${table}
           for values from ('2025-02-01T00:00:00Z') to ('2025-03-01T00:00:00Z')`,
      );
    const p = (await post(t, headers, '/api/v1/products', { name: 'p2', base_price: 10, currency: 'EUR' })).id;
    await insertObservations(t, accountId, p, [
      { competitor: null, price: '5.0000', at: '2025-02-01T02:00:00Z' },
      { competitor: null, price: '6.0000', at: '2025-02-10T12:00:00Z' },
    ]);
    await buildLocalDays(t.rt.db, ZONES, [p], new Date());
    const mine = async () => (await localDays()).filter((d) => d.startsWith(p));
    assert.deepEqual(await mine(), [
      `${p} America/New_York 2025-01-31 `,
      `${p} America/New_York 2025-02-10 `,
      `${p} Europe/Berlin 2025-02-01 `,
      `${p} Europe/Berlin 2025-02-10 `,
    ]);
    const out = await dropObservationsBefore(t.rt.db, new Date('2025-03-01T00:00:00Z'));
    assert.ok(out.dropped.includes('price_observations_p202502'), JSON.stringify(out));
    assert.deepEqual(await mine(), []);
    const h = await history(
      t,
      headers,
      p,
      'interval=day&tz=America/New_York&from=2025-01-30T05:00:00Z&to=2025-02-12T05:00:00Z',
    );
    assert.ok(
      h.series.every((s) => s.buckets.every((b) => b.count === 0)),
      JSON.stringify(h.series),
    );
  });
});
