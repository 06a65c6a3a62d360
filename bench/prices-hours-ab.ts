// `node --import tsx bench/prices-hours-ab.ts` with BENCH_PRICES_PG_DB set to a seeded bench:prices database (N=40 requests per source and zone).
// historyQuery over a year of daily history: raw rows against the hourly aggregates, same data,
// interleaved, on the bench:prices seed (BENCH_PRICES_PG_DB).
import os from 'node:os';
import { openPostgres } from '../src/db/postgres.js';
import { historyRange } from '../src/prices/history/params.js';
import { historyQuery } from '../src/prices/history/sql.js';
import { loadDataset } from './lib/prices-data.js';
const db = await openPostgres(`postgres://postgres@127.0.0.1:5432/${process.env.BENCH_PRICES_PG_DB}`);
const ds = await loadDataset(db);
const N = Number(process.env.N ?? 60);
const to = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
const from = new Date(to.getTime() - 365 * 86_400_000);
const out: Record<string, number[]> = {};
for (const tz of ['UTC', 'Europe/Berlin']) {
  const range = historyRange({ interval: 'day', from: from.toISOString(), to: to.toISOString(), tz });
  for (let i = 0; i < N; i++) {
    const productId = ds.productIds[i % ds.productIds.length]!;
    for (const source of (i % 2 ? ['raw', 'hours'] : ['hours', 'raw']) as ('raw' | 'hours')[]) {
      const q = historyQuery({ ...range, interval: 'day', productId, accountId: ds.accountId }, source);
      const t = performance.now();
      const r = await db.query(q.text, q.values);
      (out[`${tz} ${source}`] ??= []).push(performance.now() - t);
      if (r.rows.length < 11 * 300) throw new Error('short answer');
    }
  }
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
for (const [k, xs] of Object.entries(out))
  console.log(k, 'p50', pct(xs, 0.5).toFixed(1), 'p95', pct(xs, 0.95).toFixed(1));
const sizes = await db.query(
  `select (select count(*) from price_observations) as obs, (select count(*) from price_hours) as hours`,
);
console.log(JSON.stringify({ load1: os.loadavg(), ...sizes.rows[0] }));
await db.close();
