// `MONTHS=14 DAYS=400 node --import tsx bench/prices-trends-plan.ts`: whether the trends statement's
// planning is paid per request. Recreates the database ph_plan with MONTHS monthly partitions back
// (plus the migration's current and three ahead), one product with 10 competitors and an
// observation every 3 days for DAYS days, runs trendsQuery 12 times on one pooled connection
// (prepared, as the API does) and prints each run's wall time, how many runs PostgreSQL answered
// from a generic plan (pg_prepared_statements) and EXPLAIN ANALYZE's planning and execution.
import pg from 'pg';
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import { ensureObservationPartitions } from '../src/prices/partitions/index.js';
import { trendsQuery } from '../src/prices/trends/sql.js';
const url = 'postgres://postgres@127.0.0.1:5432/ph_plan';
const a = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await a.connect();
await a.query('drop database if exists ph_plan');
await a.query('create database ph_plan');
await a.end();
const db = await openPostgres(url, { poolSize: 1 });
await migrate(db);
const MONTHS = Number(process.env.MONTHS ?? 14);
for (let m = 0; m < MONTHS; m++)
  await ensureObservationPartitions(db, new Date(Date.UTC(2026, 13 - MONTHS + m, 15)), 0);
await db.query(`insert into accounts (id, name) values ('acc_1','x')`);
await db.query(
  `insert into products (id, account_id, name, base_price, currency) values ('prod_1','acc_1','k',10,'EUR')`,
);
await db.query(
  `insert into competitors (id, account_id, name, website, domain) select 'comp_' || i, 'acc_1', 'c' || i, 'https://c' || i || '.example', 'c' || i || '.example' from generate_series(1,10) i`,
);
await db.query(`insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
  select 'acc_1', 'prod_1', case when i = 0 then null else 'comp_' || i end, round((10 + random())::numeric, 2), 'EUR', true, now() - make_interval(days => d), 'api'
  from generate_series(0,10) i, generate_series(0, ${Number(process.env.DAYS ?? 400)}, 3) d`);
await db.query('analyze');
const q = trendsQuery('acc_1', 'prod_1');
for (let i = 0; i < 12; i++) {
  const t = performance.now();
  await db.query(q.text, q.values);
  console.log('run', i, (performance.now() - t).toFixed(1), 'ms');
}
console.log(
  (
    await db.query(
      `select generic_plans, custom_plans from pg_prepared_statements where statement like '/* trendsQuery%'`,
    )
  ).rows,
);
const ex = await db.query<{ 'QUERY PLAN': string }>('explain (analyze, summary) ' + q.text, q.values);
console.log(ex.rows.map((r) => r['QUERY PLAN']).filter((l) => /Planning|Execution/.test(l)));
await db.close();
