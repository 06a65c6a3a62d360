import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../src/auth/keys.js';
import { migrate } from '../../src/db/migrate.js';
import type { Database, Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { historyQuery, type BucketRow, type BucketSource, toSeries } from '../../src/prices/history/sql.js';
import { addProductsAndRivals, databaseBefore, migrationsThrough, namesAfter } from './support/populated.js';

/**
 * migrations/0015 builds the hourly aggregates (price_hours) of the observations a database
 * already holds: on a database populated under 0014 (several series, currencies, rolled-up rows
 * with samples and price sums, a gap, rows in the default partition), the aggregates equal those
 * of the raw rows and the history answers from them equal the raw ones; new observations are
 * merged in afterwards. Migrated on to the latest, the daily aggregates (0017) built from those
 * hours equal the raw rows' too.
 */

const HOURS = 15;
// Observations come in bursts: 37 an hour (every 97 s) at 01, 10 and 19 UTC each day, the other
// hours empty, over 100 hours in 34 days at 3 700 rows. More rows only lengthen the span.
const ROWS = Number(process.env.HOURS_MIGRATION_ROWS ?? 3_700);
const T = { timeout: 300_000 };

/** The month partitions of `parent` (YYYYMM), oldest first. */
async function months(db: Queryable, parent: string) {
  const r = await db.query<{ m: string }>(
    `select substring(c.relname from '_p([0-9]{6})$') as m from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass($1) and c.relname ~ '_p[0-9]{6}$' order by 1`,
    [parent],
  );
  return r.rows.map((row) => row.m);
}

/** History requests (interval, zone, range) compared with the raw computation. */
const CASES = [
  ['day', 'Europe/Berlin', '2025-02-18T00:00:00Z', '2025-04-10T00:00:00Z'],
  ['week', 'America/New_York', '2025-02-01T00:00:00Z', '2025-05-01T00:00:00Z'],
  ['hour', 'UTC', '2025-03-01T00:00:00Z', '2025-03-20T00:00:00Z'],
  ['month', 'Asia/Tokyo', '2000-01-01T00:00:00Z', '2041-01-01T00:00:00Z'],
  ['day', 'Asia/Kolkata', '2025-02-18T00:00:00Z', '2025-04-10T00:00:00Z'],
] as const;

/** The history answers of `source` equal the raw ones for every case and product. */
async function sameAnswers(db: Queryable, accountId: string, productIds: string[], source: BucketSource) {
  for (const [interval, tz, from, to] of CASES) {
    for (const productId of productIds) {
      const p = { productId, accountId, interval, tz, from: new Date(from), to: new Date(to), series: null };
      const answer = async (s: BucketSource) => {
        const q = historyQuery(p, s);
        return toSeries((await db.query<BucketRow>(q.text, q.values)).rows);
      };
      const want = await answer('raw');
      assert.ok(want.length >= 2, `${interval} ${tz}`);
      assert.deepEqual(await answer(source), want, `${source}: ${interval} ${tz} ${productId}`);
    }
  }
}

/** Rows of price_hours (or price_days) that differ from the aggregate of the raw rows by UTC hour (day), both ways, at most 5. */
async function hoursDiff(db: Queryable, table: 'price_hours' | 'price_days' = 'price_hours') {
  const unit = table === 'price_hours' ? 'hour' : 'day';
  const r = await db.query(
    `with raw as (
       select product_id, coalesce(competitor_id, '') as series, currency, date_trunc('${unit}', observed_at, 'UTC') as t,
              (array_agg(id order by observed_at, id))[1] as open_id, (array_agg(price order by observed_at, id))[1] as open,
              (array_agg(id order by observed_at desc, id desc))[1] as close_id,
              (array_agg(price order by observed_at desc, id desc))[1] as close,
              min(price) as min, max(price) as max, sum(samples)::bigint as count,
              sum(coalesce(price_sum, price * samples)) as total
         from price_observations group by 1, 2, 3, 4
     ),
     agg as (select product_id, series, currency, ${unit} as t, open_id, open, close_id, close, min, max, count, total from ${table})
     select * from ((select * from raw except select * from agg) union all (select * from agg except select * from raw)) d
     limit 5`,
  );
  return r.rows;
}

describe('migrations 0015 and 0017: hourly and daily aggregates of an existing price history', () => {
  let earlier: Awaited<ReturnType<typeof databaseBefore>>;
  /** Open for the whole file. */
  let db: Database;
  let accountId: string;
  const products = Array.from({ length: 5 }, () => newId('prod'));
  const rivals = [newId('comp'), newId('comp')];

  before(async () => {
    earlier = await databaseBefore(
      HOURS,
      async (seed) => {
        accountId = await createAccount(seed);
        await addProductsAndRivals(seed, accountId, products, rivals);
        // Irregular times (several an hour, some hours empty), prices with ties, a USD stretch.
        await seed.query(
          `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
         select $1, ($2::text[])[1 + g % 5], case g % 3 when 0 then null else ($3::text[])[g % 3] end,
                10 + (g * 7919 % 23) / 4.0, case when g % 11 = 0 then 'USD' else 'EUR' end, g % 5 <> 0,
                timestamptz '2025-02-20T00:00:00Z' + (s / 111) * interval '1 day' + (1 + s / 37 % 3 * 9) * interval '1 hour'
                  + s % 37 * interval '97 seconds', 'api'
           from generate_series(1, $4::int) g, lateral (select g * 997 % $4::int as s) slot`,
          [accountId, products, rivals, ROWS],
        );
        // Outside every month partition: the default partition.
        await seed.query(
          `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
         values ($1, $2, 12.5, 'EUR', '2001-05-05T10:00:00Z', 'api'), ($1, $2, 13.5, 'USD', '2040-01-01T00:30:00Z', 'api')`,
          [accountId, products[0]],
        );
        // Rolled-up rows carry samples and price sums; deleted rows leave gaps.
        await seed.query(`update price_observations set samples = 3, price_sum = price * 3 + 0.5 where id % 100 = 7`);
        await seed.query(`delete from price_observations where id % 100 = 8`);
      },
      { keepOpen: true },
    );
    db = earlier.db!;
  });
  after(async () => {
    await earlier?.cleanup();
  });

  it(
    'builds price_hours equal to the aggregate of the raw rows, and history answers equal to the raw ones',
    T,
    async () => {
      assert.deepEqual(await migrate(db, migrationsThrough(HOURS)), ['0015_price_hours.sql']);
      const n = await db.query<{ n: number }>('select count(*)::int as n from price_hours');
      assert.ok(Number(n.rows[0]!.n) > 1000, JSON.stringify(n.rows));
      assert.deepEqual(await hoursDiff(db), []);
      // A month of hours beside every month of observations.
      const observed = await months(db, 'price_observations');
      assert.ok(observed.length >= 4);
      assert.deepEqual(await months(db, 'price_hours'), observed);

      await sameAnswers(db, accountId, products.slice(0, 2), 'hours');

      // New observations after the migration are merged into the built hours.
      await db.query(
        `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
       values ($1, $2, 0.5, 'EUR', '2025-03-01T10:10:00Z', 'api'), ($1, $2, 999, 'EUR', '2025-03-01T10:20:00Z', 'api')`,
        [accountId, products[1]],
      );
      assert.deepEqual(await hoursDiff(db), []);
    },
  );

  it(
    'to the latest: 0017 builds price_days from the hours, equal to the aggregate of the raw rows by day',
    T,
    async () => {
      assert.deepEqual(await migrate(db), namesAfter(HOURS));
      const n = await db.query<{ n: number }>('select count(*)::int as n from price_days');
      assert.ok(Number(n.rows[0]!.n) > 100, JSON.stringify(n.rows));
      assert.deepEqual(await hoursDiff(db, 'price_days'), []);
      assert.deepEqual(await months(db, 'price_days'), await months(db, 'price_observations'));
      await sameAnswers(db, accountId, products.slice(0, 2), 'days');
      // Writes after the migration keep both: an insert merges, a delete and an update recompute.
      await db.query(
        `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
       values ($1, $2, 0.25, 'EUR', '2025-03-02T23:59:59.999Z', 'api'), ($1, $2, 1999, 'EUR', '2025-03-02T00:00:00Z', 'api')`,
        [accountId, products[2]],
      );
      await db.query(`delete from price_observations where id % 100 = 9`);
      await db.query(`update price_observations set price = price + 1 where id % 100 = 11`);
      assert.deepEqual(await hoursDiff(db), []);
      assert.deepEqual(await hoursDiff(db, 'price_days'), []);
      await sameAnswers(db, accountId, products.slice(0, 3), 'days');
    },
  );
});
