// `node --import tsx bench/prices-hours-ab.ts` with BENCH_PRICES_PG_DB set to a seeded bench:prices database
// (N=60 requests per source and zone; SOURCES=raw,hours,days).
// historyQuery over a year of daily history from each source (raw rows, hourly aggregates only,
// daily aggregates with the edge hours), same data, interleaved (the order rotates every
// request), on the bench:prices seed (BENCH_PRICES_PG_DB); latency and CPU per request of this
// process and of the database's backends.
import os from 'node:os';
import { openPostgres } from '../src/db/postgres.js';
import { historyRange } from '../src/prices/history/params.js';
import { type BucketSource, historyQuery } from '../src/prices/history/sql.js';
import { loadDataset } from './lib/prices-data.js';
import { cpuDuring } from './lib/proc.js';
const dbName = process.env.BENCH_PRICES_PG_DB!;
const db = await openPostgres(`postgres://postgres@127.0.0.1:5432/${dbName}`);
const ds = await loadDataset(db);
const N = Number(process.env.N ?? 60);
const sources = (process.env.SOURCES ?? 'raw,hours,days').split(',') as BucketSource[];
const to = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
const from = new Date(to.getTime() - 365 * 86_400_000);
const out: Record<string, { ms: number[]; cpu: { self: number; postgres: number } }> = {};
for (const tz of ['UTC', 'Europe/Berlin']) {
  const range = historyRange({ interval: 'day', from: from.toISOString(), to: to.toISOString(), tz });
  for (let i = 0; i < N; i++) {
    const productId = ds.productIds[i % ds.productIds.length]!;
    const order = sources.map((_, k) => sources[(i + k) % sources.length]!);
    for (const source of order) {
      const q = historyQuery({ ...range, interval: 'day', productId, accountId: ds.accountId }, source);
      const t = performance.now();
      const { value: r, cpu } = await cpuDuring(process.pid, dbName, () => db.query(q.text, q.values));
      const o = (out[`${tz} ${source}`] ??= { ms: [], cpu: { self: 0, postgres: 0 } });
      o.ms.push(performance.now() - t);
      o.cpu.self += cpu.loadgen;
      o.cpu.postgres += cpu.postgres;
      if (r.rows.length < 11 * 300) throw new Error('short answer');
    }
  }
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
for (const [k, { ms, cpu }] of Object.entries(out))
  console.log(
    k,
    'p50',
    pct(ms, 0.5).toFixed(1),
    'p95',
    pct(ms, 0.95).toFixed(1),
    'cpu ms/request: self',
    (cpu.self / ms.length).toFixed(1),
    'postgres',
    (cpu.postgres / ms.length).toFixed(1),
  );
const sizes = await db.query(
  `select (select count(*) from price_observations) as obs, (select count(*) from price_hours) as hours,
          (select count(*) from price_days) as days`,
);
console.log(JSON.stringify({ load1: os.loadavg(), ...sizes.rows[0] }));
await db.close();
