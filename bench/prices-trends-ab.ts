// `node --import tsx bench/prices-trends-ab.ts` with BENCH_PRICES_PG_DB set to a seeded bench:prices database
// (N=40 requests per source; SOURCES=raw,days).
// trendsQuery of one product (11 series, a year) from each source (every raw observation, or the
// daily aggregates with the ranges' edges from raw rows), same data, interleaved (the order
// rotates every request); latency and CPU per request of this process and of the database's
// backends. Every request's rows from the days are checked equal to the raw ones.
import assert from 'node:assert/strict';
import os from 'node:os';
import { openPostgres } from '../src/db/postgres.js';
import { trendsQuery, type TrendsSource } from '../src/prices/trends/sql.js';
import { loadDataset } from './lib/prices-data.js';
import { cpuDuring } from './lib/proc.js';
const dbName = process.env.BENCH_PRICES_PG_DB!;
const db = await openPostgres(`postgres://postgres@127.0.0.1:5432/${dbName}`);
const ds = await loadDataset(db);
const N = Number(process.env.N ?? 40);
const sources = (process.env.SOURCES ?? 'raw,days').split(',') as TrendsSource[];
const out: Record<string, { ms: number[]; pg: number[]; self: number[] }> = {};
let checked = 0;
for (let i = 0; i < N; i++) {
  const productId = ds.productIds[i % ds.productIds.length]!;
  // One instant for both sources, so their answers can be compared.
  const now = new Date();
  const order = sources.map((_, k) => sources[(i + k) % sources.length]!);
  const answers: Partial<Record<TrendsSource, string>> = {};
  for (const source of order) {
    const q = trendsQuery(ds.accountId, productId, { now, source });
    const t = performance.now();
    const { value: r, cpu } = await cpuDuring(process.pid, dbName, () => db.query(q.text, q.values));
    const o = (out[source] ??= { ms: [], pg: [], self: [] });
    o.ms.push(performance.now() - t);
    o.pg.push(cpu.postgres);
    o.self.push(cpu.loadgen);
    if (r.rows.length < 2) throw new Error('short answer');
    answers[source] = JSON.stringify(r.rows);
  }
  if (answers.raw && answers.days) {
    assert.equal(answers.days, answers.raw, `product ${productId}: days differ from raw`);
    checked++;
  }
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const [k, { ms, pg, self }] of Object.entries(out))
  console.log(
    k,
    'p50',
    pct(ms, 0.5).toFixed(1),
    'p95',
    pct(ms, 0.95).toFixed(1),
    'postgres cpu ms/request: mean',
    mean(pg).toFixed(1),
    'p10',
    pct(pg, 0.1).toFixed(1),
    'p50',
    pct(pg, 0.5).toFixed(1),
    'p90',
    pct(pg, 0.9).toFixed(1),
    'self cpu ms/request',
    mean(self).toFixed(1),
  );
const sizes = await db.query(
  `select (select count(*) from price_observations) as obs, (select count(*) from price_days) as days`,
);
console.log(JSON.stringify({ checked, load1: os.loadavg(), ...sizes.rows[0] }));
await db.close();
