// `SEED=1 node --import tsx bench/prices-statement-cpu.ts` (then without SEED to measure again):
// PostgreSQL backend CPU per request of the history statement (historyQuery, the SQL the endpoint
// runs; WHAT=trends: trendsQuery, at one fixed instant) for a year of one product with 10
// competitors, from /proc of the backend. SEED=1
// recreates the database ph_hist (BENCH_HIST_DB) with MONTHS (14) monthly partitions back and an
// observation per series every STEP_H hours over DAYS (400) days (1 and 400: ~105 000
// observations). UNIT: day (default), week, month, hour (hour reads 31 days); TZ_: the zone (UTC);
// N requests per round, ROUNDS rounds; each text's wall time per request through the one pooled
// connection (the driver's parsing and, for history, the rows made the API's series included) as
// p50/p95 over every round. At the end: how many runs PostgreSQL answered from a generic plan
// and from custom ones (pg_prepared_statements), and one EXPLAIN ANALYZE's planning and
// execution time.
// AT=now: the timed requests leave the instant to the statement's now() as the service does
// (its plans differ: a given instant prunes partitions when planning); answers are still
// compared at the fixed instant.
// BLOCKS=0: the trends' blocks (migrations/0022) are not built first (by default the missing
// ones are, and the pass timed).
// SOURCES=hours,localDays: historyQuery's text from each of these sources (BucketSource) is run
// too, interleaved with the endpoint's. ZONES=Europe/Berlin,...: the local days of those zones
// (migrations/0024, HISTORY_ZONES) are built first, and the pass timed; LOCAL_DAYS=0 empties them.
// VARIANTS=module.mjs exporting variant(text) => { name: text } runs those texts interleaved with
// the endpoint's and says whether each answers the same (a history's rows compared as the API's
// series; the module may export answer(rows) => series for texts whose rows have another shape).
import fs from 'node:fs';
import pg from 'pg';
import { ensureObservationPartitions } from '../src/prices/partitions/index.js';
import { type BucketRow, type BucketSource, historyQuery, toSeries } from '../src/prices/history/sql.js';
import { buildAllLocalDays } from '../src/prices/history/local-days.js';
import { trendsQuery } from '../src/prices/trends/sql.js';
import { buildAllPriceBlocks } from '../src/prices/trends/blocks.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';

const name = process.env.BENCH_HIST_DB ?? 'ph_hist';
if (process.env.SEED) {
  const a = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await a.connect();
  await a.query(`drop database if exists ${name}`);
  await a.query(`create database ${name}`);
  await a.end();
}
const db = await openPostgres(`postgres://postgres@127.0.0.1:5432/${name}`, { poolSize: 1 });
if (process.env.SEED) {
  await migrate(db);
  const now = new Date();
  for (let m = Number(process.env.MONTHS ?? 14) - 1; m >= 0; m--)
    await ensureObservationPartitions(db, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - m, 15)), 0);
  await db.query(`insert into accounts (id, name) values ('acc_1', 'bench')`);
  await db.query(
    `insert into products (id, account_id, name, base_price, currency) values ('prod_1', 'acc_1', 'k', 10, 'EUR')`,
  );
  await db.query(
    `insert into competitors (id, account_id, name, website, domain)
     select 'comp_' || i, 'acc_1', 'c' || i, 'https://c' || i || '.example', 'c' || i || '.example' from generate_series(1, 10) i`,
  );
  const step = Number(process.env.STEP_H ?? 1);
  for (let d = Number(process.env.DAYS ?? 400); d > 0; d -= 20)
    await db.query(
      `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
       select 'acc_1', 'prod_1', case when i = 0 then null else 'comp_' || i end, round((10 + random())::numeric, 2), 'EUR',
              true, now() - make_interval(hours => h), 'api'
         from generate_series(0, 10) i, generate_series(${Math.max(0, d - 20) * 24}, ${d * 24 - 1}, ${step}) h`,
    );
  await db.query('analyze');
}
if (process.env.BLOCKS !== '0') {
  // The trends' blocks of whole days (migrations/0022): the background task's pass, timed.
  const t0 = performance.now();
  const built = await buildAllPriceBlocks(db, { before: new Date() });
  const days = (await db.query<{ n: string }>(`select count(*)::text as n from price_days`)).rows[0]!.n;
  const ms = performance.now() - t0;
  console.log(`blocks built: ${built.rows} block rows in ${ms.toFixed(0)} ms (${days} day rows)`);
}
if (process.env.LOCAL_DAYS === '0') await db.query(`delete from price_local_days`);
else if (process.env.ZONES) {
  const t0 = performance.now();
  const built = await buildAllLocalDays(db, process.env.ZONES.split(','), { before: new Date() });
  const n = (await db.query<{ n: string }>(`select count(*)::text as n from price_local_days`)).rows[0]!.n;
  console.log(`local days built: ${built.rows} rows in ${(performance.now() - t0).toFixed(0)} ms (${n} in the table)`);
}
const pid = (await db.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]!.p;
const cpuMs = () => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const unit = (process.env.UNIT ?? 'day') as 'day';
const to = new Date();
const from = new Date(to.getTime() - (unit === ('hour' as string) ? 31 : 365) * 86_400_000);
const historyParams = {
  productId: 'prod_1',
  accountId: 'acc_1',
  from,
  to,
  tz: process.env.TZ_ ?? 'UTC',
  series: null,
  interval: unit,
};
const history = historyQuery(historyParams);
const trends = trendsQuery('acc_1', 'prod_1', { now: to });
const q = process.env.WHAT === 'trends' ? trends : history;
const texts: Record<string, string> = { endpoint: q.text };
const variants = process.env.VARIANTS
  ? ((await import(process.env.VARIANTS)) as {
      variant: (text: string) => Record<string, string>;
      answer?: (rows: unknown[]) => unknown;
    })
  : undefined;
if (variants) Object.assign(texts, variants.variant(q.text));
for (const source of process.env.SOURCES?.split(',') ?? [])
  texts[source] = historyQuery(historyParams, source as BucketSource).text;
const answerOf = (k: string, rows: unknown[]) =>
  q === trends ? rows : k !== 'endpoint' && variants?.answer ? variants.answer(rows) : toSeries(rows as BucketRow[]);
const timed = process.env.AT === 'now' ? [...q.values.slice(0, 2), null] : q.values;
const N = Number(process.env.N ?? 10);
const out: Record<string, number[]> = {};
const walls: Record<string, number[]> = {};
const answers: Record<string, string> = {};
for (let round = 0; round < Number(process.env.ROUNDS ?? 6); round++)
  for (const [k, text] of Object.entries(texts)) {
    answers[k] = JSON.stringify(answerOf(k, (await db.query(text, q.values)).rows));
    const c0 = cpuMs();
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      answerOf(k, (await db.query(text, timed)).rows);
      (walls[k] ??= []).push(performance.now() - t0);
    }
    (out[k] ??= []).push((cpuMs() - c0) / N);
  }
const pct = (v: number[], p: number) => [...v].sort((a, b) => a - b)[Math.ceil((p / 100) * v.length) - 1]!;
for (const [k, v] of Object.entries(out))
  console.log(
    k.padEnd(10),
    'backend CPU ms/request per round:',
    v.map((x) => x.toFixed(1)).join(' '),
    `| wall p50/p95 ms: ${pct(walls[k]!, 50).toFixed(1)} / ${pct(walls[k]!, 95).toFixed(1)}`,
    answers[k] === answers.endpoint ? '(same answer)' : '(DIFFERENT ANSWER)',
  );
const plans = await db.query<{ generic_plans: number; custom_plans: number }>(
  `select generic_plans, custom_plans from pg_prepared_statements where statement = $1`,
  [q.text],
);
console.log('the endpoint statement on this connection:', plans.rows[0]);
const explain = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze) ${q.text}`, timed);
console.log(explain.rows.map((r) => r['QUERY PLAN']).filter((l) => /Planning Time|Execution Time/.test(l)));
await db.close();
