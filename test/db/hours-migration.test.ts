import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database, Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { historyQuery, type BucketRow, toSeries } from '../../src/prices/history/sql.js';
import { testStorage, type TestStorage } from '../helpers/database.js';

/**
 * migrations/0015 builds the hourly aggregates (price_hours) of the observations a database
 * already holds: on a database populated under 0014 (several series, currencies, rolled-up rows
 * with samples and price sums, a gap, rows in the default partition), the aggregates equal those
 * of the raw rows and the history answers from them equal the raw ones; new observations are
 * merged in afterwards.
 */

const HOURS = 15;
const ROWS = Number(process.env.HOURS_MIGRATION_ROWS ?? 30_000);
const T = { timeout: 300_000 };

/** price_hours rows that differ from the aggregate of the raw rows (both ways), at most 5. */
async function hoursDiff(db: Queryable) {
  const r = await db.query(
    `with raw as (
       select product_id, coalesce(competitor_id, '') as series, currency, date_trunc('hour', observed_at, 'UTC') as hour,
              (array_agg(id order by observed_at, id))[1] as open_id, (array_agg(price order by observed_at, id))[1] as open,
              (array_agg(id order by observed_at desc, id desc))[1] as close_id,
              (array_agg(price order by observed_at desc, id desc))[1] as close,
              min(price) as min, max(price) as max, sum(samples)::bigint as count,
              sum(coalesce(price_sum, price * samples)) as total
         from price_observations group by 1, 2, 3, 4
     ),
     agg as (select product_id, series, currency, hour, open_id, open, close_id, close, min, max, count, total from price_hours)
     select * from ((select * from raw except select * from agg) union all (select * from agg except select * from raw)) d
     limit 5`,
  );
  return r.rows;
}

describe('migration 0015: hourly aggregates of an existing price history', () => {
  let storage: TestStorage;
  let accountId: string;
  const products = Array.from({ length: 5 }, () => newId('prod'));
  const rivals = [newId('comp'), newId('comp')];

  const withDb = async <R>(fn: (db: Database) => Promise<R>): Promise<R> => {
    const db = await openDatabase(loadConfig(storage.env));
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };

  before(async () => {
    storage = await testStorage();
    // From an empty database (the PGlite template copy is migrated already).
    if (storage.kind === 'pglite')
      fs.rmSync(path.join(storage.env.DATA_DIR!, 'pgdata'), { recursive: true, force: true });
    await withDb(async (db) => {
      await migrate(
        db,
        readMigrations().filter((m) => m.id < HOURS),
      );
      accountId = await createAccount(db);
      for (const id of products) {
        await db.query(
          `insert into products (id, account_id, name, base_price, currency) values ($1, $2, 'Kettle', 40, 'EUR')`,
          [id, accountId],
        );
      }
      for (const id of rivals) {
        await db.query(
          `insert into competitors (id, account_id, name, website, domain) values ($1, $2, 'Rival', 'https://rival.example', 'rival.example')`,
          [id, accountId],
        );
      }
      // Irregular times (several an hour, some hours empty), prices with ties, a USD stretch.
      await db.query(
        `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
         select $1, ($2::text[])[1 + g % 5], case g % 3 when 0 then null else ($3::text[])[g % 3] end,
                10 + (g * 7919 % 23) / 4.0, case when g % 11 = 0 then 'USD' else 'EUR' end, g % 5 <> 0,
                timestamptz '2025-02-20T00:00:00Z' + (g * 997 % $4::int) * interval '97 seconds', 'api'
           from generate_series(1, $4::int) g`,
        [accountId, products, rivals, ROWS],
      );
      // Outside every month partition: the default partition.
      await db.query(
        `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
         values ($1, $2, 12.5, 'EUR', '2001-05-05T10:00:00Z', 'api'), ($1, $2, 13.5, 'USD', '2040-01-01T00:30:00Z', 'api')`,
        [accountId, products[0]],
      );
      // Rolled-up rows carry samples and price sums; deleted rows leave gaps.
      await db.query(`update price_observations set samples = 3, price_sum = price * 3 + 0.5 where id % 100 = 7`);
      await db.query(`delete from price_observations where id % 100 = 8`);
    });
  });
  after(async () => {
    await storage?.cleanup();
  });

  it(
    'builds price_hours equal to the aggregate of the raw rows, and history answers equal to the raw ones',
    T,
    async () => {
      await withDb(async (db) => {
        assert.deepEqual(
          await migrate(
            db,
            readMigrations().filter((m) => m.id <= 15),
          ),
          ['0015_price_hours.sql'],
        );
        const n = await db.query<{ n: number }>('select count(*)::int as n from price_hours');
        assert.ok(Number(n.rows[0]!.n) > 1000, JSON.stringify(n.rows));
        assert.deepEqual(await hoursDiff(db), []);
        // A month of hours beside every month of observations.
        const months = async (parent: string) =>
          (
            await db.query<{ m: string }>(
              `select substring(c.relname from '_p([0-9]{6})$') as m from pg_inherits i join pg_class c on c.oid = i.inhrelid
              where i.inhparent = to_regclass($1) and c.relname ~ '_p[0-9]{6}$' order by 1`,
              [parent],
            )
          ).rows.map((r) => r.m);
        const observed = await months('price_observations');
        assert.ok(observed.length >= 4);
        assert.deepEqual(await months('price_hours'), observed);

        for (const [interval, tz, from, to] of [
          ['day', 'Europe/Berlin', '2025-02-18T00:00:00Z', '2025-04-10T00:00:00Z'],
          ['week', 'America/New_York', '2025-02-01T00:00:00Z', '2025-05-01T00:00:00Z'],
          ['hour', 'UTC', '2025-03-01T00:00:00Z', '2025-03-20T00:00:00Z'],
          ['month', 'Asia/Tokyo', '2000-01-01T00:00:00Z', '2041-01-01T00:00:00Z'],
          ['day', 'Asia/Kolkata', '2025-02-18T00:00:00Z', '2025-04-10T00:00:00Z'],
        ] as const) {
          for (const productId of products.slice(0, 2)) {
            const p = {
              productId,
              accountId,
              interval,
              tz,
              from: new Date(from),
              to: new Date(to),
              series: null,
            };
            const answer = async (source: 'hours' | 'raw') => {
              const q = historyQuery(p, source);
              return toSeries((await db.query<BucketRow>(q.text, q.values)).rows);
            };
            const want = await answer('raw');
            assert.ok(want.length >= 2, `${interval} ${tz}`);
            assert.deepEqual(await answer('hours'), want, `${interval} ${tz} ${productId}`);
          }
        }

        // New observations after the migration are merged into the built hours.
        await db.query(
          `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
         values ($1, $2, 0.5, 'EUR', '2025-03-01T10:10:00Z', 'api'), ($1, $2, 999, 'EUR', '2025-03-01T10:20:00Z', 'api')`,
          [accountId, products[1]],
        );
        assert.deepEqual(await hoursDiff(db), []);
      });
    },
  );
});
