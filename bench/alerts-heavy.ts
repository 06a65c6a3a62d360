/**
 * `npm run bench:alerts-heavy` (issue 22): the alert engine on a heavy history, and what another
 * account sees meanwhile. The app runs in process (Fastify inject: the real routes, validation
 * and database) on PostgreSQL (DATABASE_URL, a fresh schema dropped after) or, without it, on
 * embedded PGlite in a temporary directory.
 *
 * Three accounts: `heavy` and `plain` each hold one competitor's price series of
 * BENCH_HEAVY_OBSERVATIONS (default 50 000) observations, one every 10 minutes (about 347 days),
 * a random walk with sales; `other` is another shop whose `GET /alerts?limit=1` runs
 * BENCH_HEAVY_CLIENTS at a time (default 4) throughout, its latencies taken per phase.
 * - preview: `POST /alerts/preview` of `lowest_in_days: 365` over the whole series on `heavy`
 *   (target: within 5 s embedded, 2 s PostgreSQL; the other account's p99 under 250 ms);
 * - ingest: five account-wide `lowest_in_days` rules (7, 30, 90, 180, 365 days) on `heavy`; a
 *   1 000-observation batch (the series' next 1 000) into `heavy` and the same batch into `plain`
 *   (no rules), interleaved (target: with rules at most 3x without; the other account's p99 under
 *   250 ms). The batch with rules is timed as its request and, apart, the evaluation of its
 *   queued batch just after (ALERT_INLINE_MAX, default 100: run here as the worker runs it);
 *   both ratios are reported, the request's and the request's plus the evaluation's.
 * Env: BENCH_HEAVY_ROUNDS=3 (previews and batch pairs), BENCH_HEAVY_OBSERVATIONS, BENCH_HEAVY_CLIENTS.
 */
import os from 'node:os';
import pino from 'pino';
import { drainAlertBacklog } from '../src/alerts/engine/backlog.js';
import { buildApp } from '../src/app.js';
import { createKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config.js';
import { maintain } from '../src/db/pglite-maintenance.js';
import { createRuntime } from '../src/runtime.js';
import { env, machine, writeResult } from './lib/common.js';
import { percentile } from './lib/load.js';
import { testStorage } from '../test/helpers/database.js';

const ROUNDS = Math.max(1, env('BENCH_HEAVY_ROUNDS', 3));
const OBSERVATIONS = Math.max(2000, env('BENCH_HEAVY_OBSERVATIONS', 50_000));
const CLIENTS = Math.max(1, env('BENCH_HEAVY_CLIENTS', 4));
const STEP_MS = 10 * 60_000;
const START = Date.UTC(2025, 0, 1);

const s = await testStorage();
const config = loadConfig({ AUTH_FAILURE_LIMIT: '1000000', ...s.env });
const rt = await createRuntime(config, pino({ level: 'warn' }));
const app = await buildApp(rt);
await app.ready();

type Headers = Record<string, string>;

async function post<T = { id: string }>(headers: Headers, url: string, payload: object): Promise<T> {
  const r = await app.inject({ method: 'POST', url, headers, payload });
  if (r.statusCode >= 300) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  return r.json<T>();
}

async function account(): Promise<{ headers: Headers; product: string; competitor: string }> {
  const k = await createKey(rt.db, { plan: 'business', accountId: null });
  const headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
  const product = (await post(headers, '/api/v1/products', { name: 'Kettle', base_price: 49.99, currency: 'EUR' })).id;
  const competitor = (await post(headers, '/api/v1/competitors', { name: 'Rival', website: 'https://rival.example' }))
    .id;
  return { headers, product, competitor };
}

/**
 * The series' price at step i (every 10 minutes): it holds for an hour or more (a new price in
 * about one hour of three), drifting around 50 with the odd sale, as a monitored shop's does.
 */
function priceAt(step: number): number {
  const i = Math.floor(step / 18);
  let x = Math.imul(i ^ 0x5bd1e995, 0x45d9f3b);
  x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d);
  const r = ((x ^ (x >>> 13)) >>> 0) / 2 ** 32;
  const wave = Math.sin(i / 40) * 6 + Math.sin(i / 7) * 2;
  const sale = r < 0.01 ? -8 : 0;
  return Math.round((50 + wave + sale + r) * 100) / 100;
}

const batchOf = (a: { product: string; competitor: string }, from: number, n: number) =>
  Array.from({ length: n }, (_, k) => ({
    product_id: a.product,
    competitor_id: a.competitor,
    price: priceAt(from + k),
    currency: 'EUR',
    in_stock: true,
    observed_at: new Date(START + (from + k) * STEP_MS).toISOString(),
  }));

const heavy = await account();
const plain = await account();
const other = await account();
const t0 = Date.now();
for (let i = 0; i < OBSERVATIONS; i += 1000) {
  const n = Math.min(1000, OBSERVATIONS - i);
  await post(heavy.headers, '/api/v1/prices', { observations: batchOf(heavy, i, n) });
  await post(plain.headers, '/api/v1/prices', { observations: batchOf(plain, i, n) });
}
await post(other.headers, '/api/v1/alerts', { name: 'other', condition: { type: 'price_below', threshold: 10 } });
if (rt.db.kind === 'pglite') await maintain(rt.db);
else await rt.db.exec('analyze');
console.log(`# seeded 2 x ${OBSERVATIONS} observations in ${((Date.now() - t0) / 1000).toFixed(1)} s (${s.kind})`);

/** The other account's requests, CLIENTS at a time, while `work` runs; their latencies in ms. */
async function meanwhile<T>(
  work: () => Promise<T>,
): Promise<{ result: T; ms: number; latencies: number[]; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let done = false;
  const client = async () => {
    while (!done) {
      const a = performance.now();
      const r = await app.inject({ method: 'GET', url: '/api/v1/alerts?limit=1', headers: other.headers });
      latencies.push(performance.now() - a);
      if (r.statusCode !== 200) failures++;
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  const a = performance.now();
  const result = await work();
  const ms = performance.now() - a;
  done = true;
  await Promise.all(clients);
  return { result, ms, latencies, failures };
}

const p = (xs: number[], q: number) => Math.round(percentile(Float64Array.from(xs).sort(), q) * 10) / 10;
const summary = (xs: number[]) => ({ n: xs.length, p50: p(xs, 50), p99: p(xs, 99), max: Math.round(Math.max(...xs)) });

const previews: {
  ms: number;
  count: number;
  complete: unknown;
  other: ReturnType<typeof summary>;
  failures: number;
}[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const m = await meanwhile(() =>
    post<{ count: number; complete?: boolean }>(heavy.headers, '/api/v1/alerts/preview', {
      name: 'year low',
      condition: { type: 'lowest_in_days', days: 365 },
      from: new Date(START).toISOString(),
      to: new Date(START + 366 * 86_400_000).toISOString(),
    }),
  );
  previews.push({
    ms: Math.round(m.ms),
    count: m.result.count,
    complete: m.result.complete,
    other: summary(m.latencies),
    failures: m.failures,
  });
  console.log(
    `preview ${r + 1}: ${Math.round(m.ms)} ms, ${m.result.count} firings, complete ${String(m.result.complete)}; other account: ${JSON.stringify(summary(m.latencies))}`,
  );
}

for (const days of [7, 30, 90, 180, 365]) {
  await post(heavy.headers, '/api/v1/alerts', {
    name: `${days}-day low`,
    condition: { type: 'lowest_in_days', days },
    rearm: 'every_change',
  });
}
const batches: {
  request: number;
  evaluation: number;
  none: number;
  ratio: number;
  ratioWithEvaluation: number;
  other: ReturnType<typeof summary>;
  otherWithout: ReturnType<typeof summary>;
}[] = [];
let next = OBSERVATIONS;
for (let r = 0; r < ROUNDS; r++) {
  // With rules: the request, then the evaluation of its queued batch (a batch over
  // ALERT_INLINE_MAX is evaluated just after its commit, as the worker's alert-backlog task does
  // it), each timed; the other account's requests run through both.
  const withRules = async () =>
    meanwhile(async () => {
      const a = performance.now();
      await post(heavy.headers, '/api/v1/prices', { observations: batchOf(heavy, next, 1000) });
      const request = performance.now() - a;
      await drainAlertBacklog(rt.db);
      return { request, evaluation: performance.now() - a - request };
    });
  const without = async () =>
    meanwhile(() => post(plain.headers, '/api/v1/prices', { observations: batchOf(plain, next, 1000) }));
  // Order swapped every other round.
  let w: Awaited<ReturnType<typeof withRules>>;
  let n: Awaited<ReturnType<typeof without>>;
  if (r % 2 === 0) {
    w = await withRules();
    n = await without();
  } else {
    n = await without();
    w = await withRules();
  }
  next += 1000;
  const row = {
    request: Math.round(w.result.request),
    evaluation: Math.round(w.result.evaluation),
    none: Math.round(n.ms),
    ratio: Math.round((w.result.request / n.ms) * 100) / 100,
    ratioWithEvaluation: Math.round((w.ms / n.ms) * 100) / 100,
    other: summary(w.latencies),
    otherWithout: summary(n.latencies),
  };
  batches.push(row);
  console.log(
    `batch ${r + 1}: with rules ${row.request} ms + evaluation ${row.evaluation} ms, without ${row.none} ms: ratio ${row.ratio}, with the evaluation ${row.ratioWithEvaluation}; ` +
      `other account meanwhile: ${JSON.stringify(row.other)}, during the batch without rules: ${JSON.stringify(row.otherWithout)}`,
  );
}

const result = {
  machine: machine(),
  kind: s.kind,
  observations: OBSERVATIONS,
  clients: CLIENTS,
  previews,
  batches,
  load1: os.loadavg()[0],
};
writeResult(`alerts-heavy-${s.kind}`, result);
await app.close();
await rt.close();
await s.cleanup();
