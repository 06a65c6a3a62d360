import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createAccount, createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import type { Queryable } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { monthOf } from '../../src/prices/partitions/index.js';
import { createRuntime } from '../../src/runtime.js';
import {
  addProductsAndRivals,
  appliedIds,
  databaseBefore,
  type EarlierDatabase,
  killMidMigration,
  namesAfter,
  partitionRows,
  relkind,
} from './support/populated.js';

/**
 * migrations/0014 moves price_observations into monthly partitions. On a database populated
 * under the previous migrations: a process killed in the middle of the move leaves the old table
 * as it was, and the rerun (to the latest migration) moves every row once, ids and all, with the
 * price history, the series and the changes unchanged, and new observations tracked as before.
 */

const PARTITIONED = 14;
// PostgreSQL: the migration waits for the kill (support/populated.ts), so the rows are what the
// checks need. PGlite: the kill, made while rows are copied, must come before the pending
// migrations' one transaction commits; these rows keep that seconds away.
const ROWS = Number(process.env.PARTITION_MIGRATION_ROWS ?? (process.env.DATABASE_URL ? 3_000 : 5_000));
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

describe('migration 0014: price_observations into monthly partitions', () => {
  let earlier: EarlierDatabase;
  let accountId: string;
  const products = Array.from({ length: 20 }, () => newId('prod'));
  const rivals = [newId('comp'), newId('comp')];
  let before0014: Awaited<ReturnType<typeof fingerprint>>;

  before(async () => {
    earlier = await databaseBefore(PARTITIONED, async (db) => {
      accountId = await createAccount(db);
      await addProductsAndRivals(db, accountId, products, rivals);
      // ROWS observations from 2025-05 over 277 days (into 2026-02) whatever ROWS is, through the
      // insert trigger of the old table, so the series and changes are what that schema made.
      await db.query(
        `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
         select $1, ($2::text[])[1 + g % 20], case g % 3 when 0 then null else ($3::text[])[g % 3] end,
                10 + (g * 7 % 13), 'EUR', g % 5 <> 0,
                timestamptz '2025-05-01T00:00:00Z' + g * (interval '277 days' / $4::int), 'api'
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
      await db.query(`update price_observations set samples = 3, price_sum = price * 3 + 0.5 where id % 100 = 7`);
      await db.query(`delete from price_observations where id % 100 = 8`);
      before0014 = await fingerprint(db);
      assert.equal(await relkind(db, 'price_observations'), 'r');
    });
    assert.ok(before0014.n > ROWS * 0.98 && before0014.nc > ROWS / 2, JSON.stringify(before0014));
  });
  after(async () => {
    await earlier?.cleanup();
  });

  it(
    'a process killed in the middle of the move leaves the old table whole; the rerun moves every row once',
    T,
    async () => {
      const killed = await killMidMigration(earlier, {
        table: 'price_observations',
        accountId,
        minCopiedBytes: 256 * 1024,
      });
      process.stdout.write(`# killed mid-migration: ${killed.seen}\n`);

      await earlier.withDb(async (db) => {
        assert.deepEqual(
          (await appliedIds(db)).filter((id) => id >= PARTITIONED),
          [],
          'killed before the migration committed',
        );
        assert.equal(await relkind(db, 'price_observations'), 'r', 'still the old table');
        assert.deepEqual(await fingerprint(db), before0014);
        assert.deepEqual(await migrate(db), namesAfter(PARTITIONED - 1));
        assert.equal(await relkind(db, 'price_observations'), 'p');
        assert.deepEqual(
          await fingerprint(db),
          before0014,
          'every row once, every column as it was; series and changes untouched',
        );
        const byName = await partitionRows(db, 'price_observations');
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
      const rt = await createRuntime(loadConfig(earlier.storage.env), pino({ level: 'silent' }));
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
        // An hour ago, but not before this month began: the migration makes this month's partition
        // and those ahead, so in a month's first hour the last one's observations wait in the
        // default partition for the maintenance task (test/prices/partitions.test.ts).
        const now = new Date();
        const at = new Date(Math.max(now.getTime() - 3_600_000, Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));
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
