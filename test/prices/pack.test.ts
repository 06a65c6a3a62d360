import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pg from 'pg';
import { useTestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/database.js';
import { rangeOf } from '../../src/db/partitions.js';
import { needsPacking, packPartition } from '../../src/db/pack.js';
import { buildAllPriceBlocks } from '../../src/prices/trends/blocks.js';
import { ensureObservationPartitions, OBSERVATION_PARTITIONS } from '../../src/prices/partitions/index.js';
import { packClosedMonths } from '../../src/prices/partitions/pack.js';
import { account, competitor, insertObservations, type Headers, post } from './history-support.js';

/**
 * Packing closed months (src/db/pack.ts, docs/SCALING.md "Packed months"): the day rows and
 * blocks of a month rewritten in key order and swapped in for the partition. Nothing a client
 * reads changes, the partition keeps its name, bounds, indexes and keys, and a writer of the
 * month that arrives during the copy makes the pack give way rather than wait on it.
 */

const DAY = 86_400_000;
const MARCH = rangeOf('month', new Date('2025-03-01T00:00:00Z'));
const APRIL = rangeOf('month', new Date('2025-04-01T00:00:00Z'));

describe('closed months packed in key order', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  const products: string[] = [];
  let comp: string;

  const reads = async () => {
    const out: string[] = [];
    for (const p of products)
      for (const url of [
        `/api/v1/products/${p}/prices?interval=day&from=2025-03-01T00:00:00Z&to=2025-05-01T00:00:00Z`,
        `/api/v1/products/${p}/prices?interval=week&from=2025-03-01T00:00:00Z&to=2025-05-01T00:00:00Z`,
        `/api/v1/products/${p}/trends`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url, headers });
        assert.equal(res.statusCode, 200, res.body);
        out.push(res.body.replace(/"as_of":"[^"]*"/, ''));
      }
    return out;
  };
  const rows = async (table: string) =>
    (
      await t.rt.db.query<{ r: string }>(`select t::text as r from ${table} t where account_id = $1 order by t::text`, [
        accountId,
      ])
    ).rows.map((r) => r.r);
  /**
   * How many of the partition's pages hold each product's rows, against the fewest they would
   * fill (their share of its pages, + 2 for the pages they share with the products beside them and
   * a row the heap put back into the space left on an earlier page): the products over it.
   */
  const scattered = async (name: string) => {
    const q = await t.rt.db.query<{ product_id: string; pages: number; fewest: number }>(
      `with r as (select product_id, (ctid::text::point)[0]::int as page from ${name}),
            total as (select count(distinct page)::float8 / count(*) as pages_per_row from r)
       select product_id, count(distinct page)::int as pages, ceil(count(*) * min(total.pages_per_row))::int + 2 as fewest
         from r, total group by product_id order by product_id`,
    );
    return q.rows.filter((r) => r.pages > r.fewest).map((r) => `${r.product_id}: ${r.pages} pages, not ${r.fewest}`);
  };
  const catalogue = async (name: string) => {
    const q = await t.rt.db.query<{ what: string }>(
      `select 'index ' || c.relname || ' ' || regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', '') as what
         from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = $1::regclass
       union all
       select 'constraint ' || conname || ' ' || contype::text || ' ' || convalidated || ' ' || pg_get_constraintdef(oid)
         from pg_constraint where conrelid = $1::regclass
       union all
       select 'bound ' || pg_get_expr(relpartbound, oid) || ' ' || relispartition from pg_class where oid = $1::regclass
       order by 1`,
      [name],
    );
    return q.rows.map((r) => r.what);
  };

  before(async () => {
    let first: string;
    ({ headers, accountId, productId: first } = await account(t));
    products.push(first);
    for (let i = 0; i < 3; i++)
      products.push(
        (await post(t, headers, '/api/v1/products', { name: `p${i}`, base_price: 10, currency: 'EUR' })).id,
      );
    comp = await competitor(t, headers);
    // Day by day across the products, as checks write them: a product's days lie apart.
    for (let d = 0; d < 61; d++)
      for (const [n, p] of products.entries()) {
        const at = new Date(MARCH.from.getTime() + d * DAY + (n + 1) * 3_600_000).toISOString();
        await insertObservations(t, accountId, p, [
          { competitor: comp, price: (10 + ((d * 7 + n) % 5)).toFixed(4), at },
          { competitor: null, price: (11 + ((d + n) % 3)).toFixed(4), at },
        ]);
      }
    await ensureObservationPartitions(t.rt.db);
    if (t.rt.db.kind === 'postgres') await buildAllPriceBlocks(t.rt.db, { before: new Date() });
  });

  it(
    'on PostgreSQL: answers, rows, names, bounds, indexes and keys unchanged, the day rows in the order the history reads them',
    { skip: usingPostgres() ? false : 'PostgreSQL only' },
    async () => {
      const answers = await reads();
      const days = await rows('price_days');
      const blocks = await rows('price_blocks');
      assert.ok(blocks.length > 0, 'blocks built');
      const shapes = new Map<string, string[]>();
      for (const table of ['price_days', 'price_blocks'])
        for (const r of [MARCH, APRIL]) shapes.set(`${table}_${r.suffix}`, await catalogue(`${table}_${r.suffix}`));
      const dayRows = (await t.rt.db.query('select 1 from price_days_p202503')).rows.length;
      assert.equal((await scattered('price_days_p202503')).length, products.length, 'written day by day');

      const packed = await packClosedMonths(t.rt.db, new Date(), 14);
      const names = packed.map((p) => p.table);
      for (const name of shapes.keys()) assert.ok(names.includes(name), `${name} packed: ${names.join(', ')}`);
      assert.ok(!names.some((n) => /_p\d{6}$/.exec(n)![0] >= rangeOf('month', new Date(Date.now() - 14 * DAY)).suffix));
      assert.equal(packed.find((p) => p.table === 'price_days_p202503')!.rows, dayRows);

      assert.deepEqual(await reads(), answers);
      assert.deepEqual(await rows('price_days'), days);
      assert.deepEqual(await rows('price_blocks'), blocks);
      for (const [name, shape] of shapes) assert.deepEqual(await catalogue(name), shape, name);
      assert.deepEqual(await scattered('price_days_p202503'), []);
      // In the order the history's index walks them (product, series, day), but for a row now and
      // then that the heap put into the space left on a page it had filled.
      const walk = await t.rt.db.query<{ back: number; pages: number }>(
        `select count(*) filter (where back)::int as back, count(distinct page)::int as pages from (
           select (product_id, series, day) < lag((product_id, series, day)) over (order by ctid) as back,
                  (ctid::text::point)[0] as page
             from price_days_p202503) x`,
      );
      assert.ok(walk.rows[0]!.back <= walk.rows[0]!.pages, JSON.stringify(walk.rows));
      const left = await t.rt.db.query(`select relname from pg_class where relname ~ '_(packing|unpacked)'`);
      assert.deepEqual(left.rows, []);
      assert.equal(await needsPacking(t.rt.db, 'price_days', MARCH), false);
      assert.deepEqual(await packClosedMonths(t.rt.db, new Date(), 14), [], 'a second run finds nothing to do');

      // Written to and cascaded into as before: a late row, then a product deleted.
      await insertObservations(t, accountId, products[0]!, [
        { competitor: comp, price: '99.0000', at: '2025-03-10T23:00:00Z' },
      ]);
      const late = await t.rt.db.query<{ max: string }>(
        `select max::text from price_days where product_id = $1 and day = '2025-03-10T00:00:00Z' and series = $2`,
        [products[0], comp],
      );
      assert.equal(late.rows[0]!.max, '99.0000');
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${products[3]}`, headers });
      assert.equal(res.statusCode, 204, res.body);
      const gone = await t.rt.db.query(`select 1 from price_days_p202503 where product_id = $1`, [products[3]]);
      assert.equal(gone.rows.length, 0);
      products.pop();
    },
  );

  it(
    'on PostgreSQL: a writer of the month arriving during the copy makes the pack give way, and the next one packs its row',
    { skip: usingPostgres() ? false : 'PostgreSQL only' },
    async () => {
      const FEB = rangeOf('month', new Date('2025-02-01T00:00:00Z'));
      await insertObservations(t, accountId, products[1]!, [
        { competitor: comp, price: '10.0000', at: '2025-02-03T10:00:00Z' },
      ]);
      await ensureObservationPartitions(t.rt.db);
      const writer = new pg.Client({ connectionString: t.storage.env.DATABASE_URL });
      await writer.connect();
      try {
        let write: Promise<unknown> | undefined;
        const r = await packPartition(t.rt.db, OBSERVATION_PARTITIONS, 'price_days', 'day', FEB, {
          afterCopy: async () => {
            const pid = (await writer.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
            write = writer.query(
              `insert into price_observations (account_id, product_id, competitor_id, price, currency, observed_at, source)
               values ($1, $2, $3, 12, 'EUR', '2025-02-04T10:00:00Z', 'api')`,
              [accountId, products[1], comp],
            );
            for (const deadline = Date.now() + 15_000; ;) {
              const w = await t.rt.db.query(
                `select 1 from pg_stat_activity where pid = $1 and cardinality(pg_blocking_pids(pid)) > 0`,
                [pid],
              );
              if (w.rows.length > 0) return;
              if (Date.now() > deadline) throw new Error('the writer never waited for the copy');
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          },
        });
        assert.equal(r, undefined, 'gave way');
        await write;
        assert.equal(await needsPacking(t.rt.db, 'price_days', FEB), true);
        const left = await t.rt.db.query(`select relname from pg_class where relname ~ '_(packing|unpacked)'`);
        assert.deepEqual(left.rows, []);
        const again = await packPartition(t.rt.db, OBSERVATION_PARTITIONS, 'price_days', 'day', FEB);
        assert.equal(again?.rows, 2);
        const feb = await t.rt.db.query(`select day from price_days_p202502 where product_id = $1 order by day`, [
          products[1],
        ]);
        assert.deepEqual(
          feb.rows.map((x) => new Date((x as { day: Date }).day).toISOString()),
          ['2025-02-03T00:00:00.000Z', '2025-02-04T00:00:00.000Z'],
        );
      } finally {
        await writer.end();
      }
    },
  );

  it(
    'on PostgreSQL: an old table left by a pack that stopped after its swap is dropped by the next run',
    { skip: usingPostgres() ? false : 'PostgreSQL only' },
    async () => {
      await t.rt.db.query('create table price_days_p202001_unpacked (like price_days)');
      await t.rt.db.query('create table price_days_p202001_kept (like price_days)');
      await packClosedMonths(t.rt.db, new Date(), 14);
      const left = await t.rt.db.query<{ relname: string }>(
        `select relname from pg_class where relname like 'price\\_days\\_p202001%' order by relname`,
      );
      assert.deepEqual(
        left.rows.map((r) => r.relname),
        ['price_days_p202001_kept'],
      );
    },
  );

  it('on the embedded engine: nothing is packed', { skip: usingPostgres() ? 'embedded only' : false }, async () => {
    assert.deepEqual(await packClosedMonths(t.rt.db, new Date(), 14), []);
    assert.equal(await packPartition(t.rt.db, OBSERVATION_PARTITIONS, 'price_days', 'day', MARCH), undefined);
    assert.equal(await needsPacking(t.rt.db, 'price_days', MARCH), true);
  });
});
