/**
 * bench:online-index: the `indexes` task (src/db/online-indexes.ts, docs/SCALING.md "Indexes
 * built online") on the bench:prices data set: how long the covering series index takes to
 * build partition by partition, how long dropping the index it replaces holds the table, and
 * what a writer and a reader of price_observations see meanwhile (each on a connection of its
 * own, one statement every 20 ms: an insert of one observation in its own transaction, and a
 * series' latest observation read through the series index), against the same loops for 20 s
 * before the build.
 *
 *   BENCH_PRICES_PG_DB  the seeded database (ph_bench_prices; `npm run bench:prices-seed` first)
 *   BENCH_INDEX_RESET=1  put the database back as it was before migration 0026 first (the
 *                        covering index dropped, the series index built again: minutes at 50 M)
 *
 * Writes bench/results/online-index.json. PostgreSQL only: the embedded engine runs one
 * statement at a time, so there a partition's build holds every request for its length.
 */
import os from 'node:os';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { buildOnlineIndexes } from '../src/db/online-indexes.js';
import { openDatabase } from '../src/db/open.js';
import type { Database, Queryable } from '../src/db/types.js';
import { OBSERVATION_INDEXES } from '../src/prices/partitions/indexes.js';
import { machine, table, writeResult } from './lib/common.js';
import { percentile } from './lib/load.js';
import { PRICES_PG_DB } from './lib/prices-data.js';

const URL = `postgres://postgres@127.0.0.1:5432/${PRICES_PG_DB}`;
const COVER = 'price_observations_series_cover';
const OLD = 'price_observations_series_time';
const PERIOD_MS = 20;

const db = await openDatabase(loadConfig({ DATABASE_URL: URL }));
await migrate(db);

/** Every statement of the task timed by its name comment, in a transaction or not. */
const timed: { name: string; ms: number }[] = [];
const NAMES = ['buildPartitionIndex', 'attachPartitionIndex', 'dropReplacedIndex', 'dropFailedIndexBuild'];
const timedQuery =
  (q: Queryable['query']): Queryable['query'] =>
  async (sql, params) => {
    const t = performance.now();
    try {
      return await q(sql, params);
    } finally {
      const name = /\/\* (\w+) \*\//.exec(sql)?.[1] ?? '?';
      if (NAMES.includes(name)) timed.push({ name, ms: performance.now() - t });
    }
  };
const timing: Database = Object.create(db) as Database;
timing.query = timedQuery((sql, params) => db.query(sql, params));
timing.transaction = (fn) =>
  db.transaction((tx) =>
    fn({ query: timedQuery((sql, params) => tx.query(sql, params)), exec: (sql) => tx.exec(sql) }),
  );

const sizes = async () =>
  (
    await db.query<{ name: string; bytes: number }>(
      `select c.relname as name, sum(pg_relation_size(ii.inhrelid))::int8 as bytes
         from pg_class c join pg_inherits ii on ii.inhparent = c.oid
        where c.relname in ($1, $2) group by c.relname`,
      [COVER, OLD],
    )
  ).rows.map((r) => ({ name: r.name, gib: Math.round((Number(r.bytes) / 2 ** 30) * 100) / 100 }));

if (process.env.BENCH_INDEX_RESET === '1') {
  const def = (await db.query<{ def: string }>('select pg_get_indexdef(to_regclass($1)) as def', [COVER])).rows[0]!.def;
  console.log('reset: the covering index dropped, the series index built again');
  await db.query(`drop index if exists ${COVER}`);
  await db.exec(`set maintenance_work_mem = '1GB'`);
  await db.query(`create index if not exists ${OLD} on price_observations (product_id, competitor_id, observed_at)`);
  await db.query(def);
}

const ids = (
  await db.query<{ account_id: string; product_id: string; competitor_id: string }>(
    `select account_id, product_id, competitor_id from price_series where competitor_id is not null limit 1`,
  )
).rows[0]!;

/** A loop of one statement every PERIOD_MS on a connection of its own, until stopped: latencies in ms. */
function loop(sql: string, params: unknown[]) {
  const client = new pg.Client({ connectionString: URL });
  const lat: number[] = [];
  let stop = false;
  const done = (async () => {
    await client.connect();
    while (!stop) {
      const t = performance.now();
      await client.query(sql, params);
      const ms = performance.now() - t;
      lat.push(ms);
      if (ms < PERIOD_MS) await new Promise((r) => setTimeout(r, PERIOD_MS - ms));
    }
    await client.end();
  })();
  return {
    async stop() {
      stop = true;
      await done;
      return lat;
    },
  };
}
const writeSql = `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
                  values ($1, $2, $3, 10, 'EUR', true, now(), 'api')`;
const readSql = `select price from price_observations where product_id = $1 and competitor_id = $2 order by observed_at desc limit 1`;
const pct = (xs: number[], q: number) => Math.round(percentile(Float64Array.from(xs).sort(), q) * 10) / 10;
const stats = (phase: string, what: string, xs: number[]) => ({
  phase,
  what,
  n: xs.length,
  p50_ms: pct(xs, 50),
  p99_ms: pct(xs, 99),
  max_ms: pct(xs, 100),
});

const startedAt = new Date();
const sizesBefore = await sizes();
const rows: ReturnType<typeof stats>[] = [];
const phase = async (name: string, work: () => Promise<unknown>) => {
  const w = loop(writeSql, [ids.account_id, ids.product_id, ids.competitor_id]);
  const r = loop(readSql, [ids.product_id, ids.competitor_id]);
  const t = performance.now();
  const out = await work();
  const ms = performance.now() - t;
  rows.push(stats(name, 'insert', await w.stop()), stats(name, 'read', await r.stop()));
  return { out, ms };
};
const load1 = [os.loadavg()[0]!];
await phase('before', () => new Promise((r) => setTimeout(r, 20_000)));
const build = await phase('build', () => buildOnlineIndexes(timing, OBSERVATION_INDEXES));
load1.push(os.loadavg()[0]!);
await db.query(`delete from price_observations where product_id = $1 and competitor_id = $2 and observed_at >= $3`, [
  ids.product_id,
  ids.competitor_id,
  startedAt.toISOString(),
]);

const builds = timed.filter((s) => s.name === 'buildPartitionIndex').map((s) => s.ms / 1000);
const result = {
  machine: machine(),
  load1,
  build_s: Math.round(build.ms / 100) / 10,
  partitions_built: builds.length,
  partition_build_s: { min: Math.min(...builds), max: Math.max(...builds) },
  attach_ms: timed.filter((s) => s.name === 'attachPartitionIndex').map((s) => Math.round(s.ms * 10) / 10),
  drop_replaced_ms: timed.filter((s) => s.name === 'dropReplacedIndex').map((s) => Math.round(s.ms)),
  runs: build.out,
  sizes_before: sizesBefore,
  sizes_after: await sizes(),
  loops: rows,
};
table(rows);
console.log(JSON.stringify({ ...result, machine: undefined, loops: undefined }, null, 2));
writeResult('online-index', result);
await db.close();
