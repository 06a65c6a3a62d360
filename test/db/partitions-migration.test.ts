import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createAccount, createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database, Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { monthOf } from '../../src/prices/partitions/index.js';
import { createRuntime } from '../../src/runtime.js';
import { testStorage, type TestStorage } from '../helpers/database.js';

/**
 * migrations/0014 moves price_observations into monthly partitions. On a database populated
 * under the previous migrations: a process killed in the middle of the move leaves the old table
 * as it was, and the rerun moves every row once, ids and all, with the price history, the series
 * and the changes unchanged, and new observations tracked as before.
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PARTITIONED = 14;
// Enough that the move takes seconds, so the kill lands in its middle on either engine.
const ROWS = Number(process.env.PARTITION_MIGRATION_ROWS ?? (process.env.DATABASE_URL ? 200_000 : 100_000));
const T = { timeout: 300_000 };

/** Every column of every row, in id order, as one hash; and the same of the series and changes. */
async function fingerprint(db: Queryable) {
  const r = await db.query<{ n: number; obs: string; series: string; changes: string; nc: number }>(
    `select (select count(*)::int from price_observations) as n,
            (select md5(string_agg(concat_ws('|', id, account_id, product_id, competitor_id, listing_id, price, currency, in_stock,
                                             observed_at, source, created_at, samples, price_sum), ',' order by id))
               from price_observations) as obs,
            (select md5(string_agg(concat_ws('|', product_id, competitor_id, latest_price, latest_observed_at, latest_observation_id,
                                             first_observed_at, changes), ',' order by product_id, competitor_id))
               from price_series) as series,
            (select count(*)::int from price_changes) as nc,
            (select md5(string_agg(concat_ws('|', id, observation_id, old_price, new_price, observed_at, sequence), ',' order by id))
               from price_changes) as changes`,
  );
  return r.rows[0]!;
}

const kindOf = async (db: Queryable) =>
  (
    await db.query<{ relkind: string }>(
      `select relkind::text from pg_class where oid = to_regclass('price_observations')`,
    )
  ).rows[0]?.relkind;
const applied = async (db: Queryable) =>
  (await db.query<{ id: number }>('select id from pricehound_migrations order by id')).rows.map((r) => Number(r.id));

describe('migration 0014: price_observations into monthly partitions', () => {
  let storage: TestStorage;
  let accountId: string;
  const products = Array.from({ length: 20 }, () => newId('prod'));
  const rivals = [newId('comp'), newId('comp')];
  let before0014: Awaited<ReturnType<typeof fingerprint>>;

  const open = () => openDatabase(loadConfig(storage.env));
  const withDb = async <R>(fn: (db: Database) => Promise<R>): Promise<R> => {
    const db = await open();
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };

  before(async () => {
    // An empty database: the templates the tests start from are migrated already.
    storage = await testStorage({ migrated: false });
    await withDb(async (db) => {
      await migrate(
        db,
        readMigrations().filter((m) => m.id < PARTITIONED),
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
      // ROWS observations every 4 minutes from 2025-05 (18 months at 200 000), through the
      // insert trigger of the old table, so the series and changes are what that schema made.
      await db.query(
        `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
         select $1, ($2::text[])[1 + g % 20], case g % 3 when 0 then null else ($3::text[])[g % 3] end,
                10 + (g * 7 % 13), 'EUR', g % 5 <> 0, timestamptz '2025-05-01T00:00:00Z' + g * interval '4 minutes', 'api'
           from generate_series(1, $4::int) g`,
        [accountId, products, rivals, ROWS],
      );
      // Far from any month the migration creates: they stay in the default partition.
      await db.query(
        `insert into price_observations (account_id, product_id, price, currency, observed_at, source)
         values ($1, $2, 12.5, 'EUR', '2001-05-05T10:00:00Z', 'api'), ($1, $2, 13.5, 'USD', '2040-01-01T00:00:00Z', 'api')`,
        [accountId, products[0]],
      );
      // Rolled-up rows carry samples and price sums; a deleted row leaves a gap in the ids.
      await db.query(`update price_observations set samples = 3, price_sum = price * 3 + 0.5 where id % 1000 = 7`);
      await db.query(`delete from price_observations where id % 1000 = 8`);
      before0014 = await fingerprint(db);
      assert.equal(await kindOf(db), 'r');
    });
    assert.ok(before0014.n > ROWS * 0.99 && before0014.nc > 1000, JSON.stringify(before0014));
  });
  after(async () => {
    await storage?.cleanup();
  });

  it(
    'a process killed in the middle of the move leaves the old table whole; the rerun moves every row once',
    T,
    async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'support/migrate-and-die.ts')], {
        cwd: ROOT,
        env: { ...process.env, ...storage.env, KILL_AFTER_MS: process.env.KILL_AFTER_MS ?? '400', LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const [, signal] = await new Promise<[number | null, string | null]>((resolve) =>
        child.on('exit', (c, s) => resolve([c, s])),
      );
      assert.equal(signal, 'SIGKILL', `${out} ${err}`);
      assert.match(
        out,
        /^migrating\n$/,
        'killed before the migration committed (a slower machine needs more rows or a smaller KILL_AFTER_MS)',
      );

      if (storage.kind === 'postgres') {
        // The server ends the dead client's backend (rolling its transaction back) once it notices.
        const admin = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '' });
        try {
          for (let i = 0; ; i++) {
            const r = await admin.query<{ n: number }>(
              `select count(*)::int as n from pg_stat_activity where application_name = 'ph-migrate-and-die'`,
            );
            if (r.rows[0]!.n === 0) break;
            assert.ok(i < 600, 'the killed migration is still running after a minute');
            await new Promise((res) => setTimeout(res, 100));
          }
        } finally {
          await admin.close();
        }
      }

      await withDb(async (db) => {
        assert.ok(!(await applied(db)).includes(PARTITIONED));
        assert.equal(await kindOf(db), 'r', 'still the old table');
        assert.deepEqual(await fingerprint(db), before0014);
        assert.deepEqual(
          await migrate(
            db,
            readMigrations().filter((m) => m.id <= PARTITIONED),
          ),
          ['0014_partitioned_observations.sql'],
        );
        assert.equal(await kindOf(db), 'p');
        assert.deepEqual(
          await fingerprint(db),
          before0014,
          'every row once, every column as it was; series and changes untouched',
        );
        const parts = await db.query<{ name: string; n: number }>(
          `select c.relname as name, (select count(*)::int from price_observations po where po.tableoid = c.oid) as n
           from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'price_observations'::regclass order by 1`,
        );
        const byName = new Map(parts.rows.map((r) => [r.name, Number(r.n)]));
        assert.equal(byName.get('price_observations_default'), 2, 'the observations of 2001 and 2040');
        assert.ok((byName.get('price_observations_p202506') ?? 0) > 0);
        assert.ok(byName.has('price_observations_p202507') && byName.has('price_observations_p202601'));
        assert.equal(
          [...byName.values()].reduce((a, b) => a + b, 0),
          before0014.n,
        );
        // No leftovers of the old table.
        assert.equal(
          (await db.query(`select 1 from pg_class where relname like 'price_observations_unpartitioned%'`)).rows.length,
          0,
        );
      });
    },
  );

  it(
    'after the move: new observations get later ids, are tracked as changes, and the history reads all months',
    T,
    async () => {
      const rt = await createRuntime(loadConfig(storage.env), pino({ level: 'silent' }));
      const app = await buildApp(rt);
      try {
        await app.ready();
        const { key } = await createKey(rt.db, { plan: 'business', accountId });
        const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
        const maxBefore = Number(
          (await rt.db.query<{ m: number }>('select max(id) as m from price_observations')).rows[0]!.m,
        );
        const changesBefore = Number(
          (await rt.db.query<{ n: number }>('select count(*)::int as n from price_changes')).rows[0]!.n,
        );
        const at = new Date(Date.now() - 3_600_000);
        const res = await app.inject({
          method: 'POST',
          url: '/api/v1/prices',
          headers,
          payload: {
            observations: [{ product_id: products[1], price: 999, currency: 'EUR', observed_at: at.toISOString() }],
          },
        });
        assert.equal(res.statusCode, 200, res.body);
        const row = (
          await rt.db.query<{ id: number; part: string }>(
            `select id, tableoid::regclass::text as part from price_observations where product_id = $1 and price = 999`,
            [products[1]],
          )
        ).rows[0]!;
        assert.ok(Number(row.id) > maxBefore, `${row.id} > ${maxBefore}`);
        assert.equal(row.part.replace(/^.*\./, ''), monthOf(at).name);
        assert.equal(
          Number((await rt.db.query<{ n: number }>('select count(*)::int as n from price_changes')).rows[0]!.n),
          changesBefore + 1,
        );

        const hist = await app.inject({
          method: 'GET',
          url: `/api/v1/products/${products[0]}/prices?from=2001-01-01T00:00:00Z&to=2041-01-01T00:00:00Z&interval=month`,
          headers,
        });
        assert.equal(hist.statusCode, 200, hist.body);
        const count = (hist.json<{ series: { buckets: { count: number }[] }[] }>().series ?? [])
          .flatMap((s) => s.buckets)
          .reduce((a, b) => a + b.count, 0);
        const expected = await rt.db.query<{ n: number }>(
          `select sum(samples)::int as n from price_observations where product_id = $1`,
          [products[0]],
        );
        assert.equal(count, Number(expected.rows[0]!.n), 'every month, the default partition included');
      } finally {
        await app.close();
        await rt.close();
      }
    },
  );
});
