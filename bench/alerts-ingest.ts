/**
 * `npm run bench:alerts` (issue 9): POST /api/v1/prices throughput with 100 enabled alert rules
 * on the account against an account with none, same data, interleaved in one run (the order of
 * the pair swapped every other round). The app runs in process (Fastify inject: the real routes,
 * validation and database, no sockets) on PostgreSQL (DATABASE_URL, a fresh schema dropped after)
 * or, without DATABASE_URL, on embedded PGlite in a temporary directory.
 * Target: rows/s with rules / rows/s without >= 0.8; the median ratio over rounds, with its min
 * and max. Each account has 100 products at 2 competitors; a batch is 1000 observations, the
 * next hour for every series (5 per series), so every batch moves prices and fires some rules.
 * Env: BENCH_ALERTS_ROUNDS=8  BENCH_ALERTS_BATCHES=3 (per account and round)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { createKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config.js';
import { createRuntime } from '../src/runtime.js';
import { env, machine, writeResult } from './lib/common.js';

const ROUNDS = Math.max(1, env('BENCH_ALERTS_ROUNDS', 8));
const BATCHES = Math.max(1, env('BENCH_ALERTS_BATCHES', 3));
const PRODUCTS = 100;

async function storage(): Promise<{ env: Record<string, string>; kind: string; done: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-bench-alerts-'));
    return { kind: 'pglite', env: { DATA_DIR: dir }, done: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind: 'postgres',
    env: { DATABASE_URL: url.toString() },
    done: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

const s = await storage();
const config = loadConfig({ AUTH_FAILURE_LIMIT: '1000000', ...s.env });
const rt = await createRuntime(config, pino({ level: 'warn' }));
const app = await buildApp(rt);
await app.ready();

async function post(headers: Record<string, string>, url: string, payload: object) {
  const r = await app.inject({ method: 'POST', url, headers, payload });
  if (r.statusCode >= 300) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  return r.json<{ id: string }>();
}

interface Account {
  name: string;
  headers: Record<string, string>;
  series: { product_id: string; competitor_id: string }[];
}

async function account(name: string, rules: boolean): Promise<Account> {
  const k = await createKey(rt.db, { plan: 'business', accountId: null });
  const headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
  const competitors = [await post(headers, '/api/v1/competitors', { name: 'A', website: 'https://a.example' }), await post(headers, '/api/v1/competitors', { name: 'B', website: 'https://b.example' })];
  const products = [];
  for (let i = 0; i < PRODUCTS; i++) products.push(await post(headers, '/api/v1/products', { name: `P${i}`, base_price: 50, currency: 'EUR' }));
  if (rules) {
    // 100 rules of every price kind: 40 account-wide, 60 on one product each.
    const kinds = [
      { type: 'price_below', threshold: 45 },
      { type: 'price_above', threshold: 55 },
      { type: 'price_drop', percent: 5 },
      { type: 'price_rise', amount: 2 },
      { type: 'undercut', margin_percent: 5 },
      { type: 'lowest_in_days', days: 7 },
      { type: 'back_in_stock' },
      { type: 'out_of_stock' },
      { type: 'not_cheapest' },
      { type: 'price_below', threshold: 40, series: 'own' },
    ];
    for (let i = 0; i < 100; i++) {
      await post(headers, '/api/v1/alerts', {
        name: `r${i}`,
        condition: kinds[i % kinds.length],
        ...(i >= 40 ? { product_id: products[i % PRODUCTS]!.id } : {}),
        rearm: i % 3 === 0 ? 'every_change' : 'on_clear',
      });
    }
  }
  return { name, headers, series: products.flatMap((p) => competitors.map((c) => ({ product_id: p.id, competitor_id: c.id }))) };
}

const withRules = await account('rules', true);
const without = await account('none', false);
const start = Date.UTC(2025, 0, 1);
const hourOf = new Map<string, number>();

/** One batch: the next 5 hours of every series, prices wandering around 45-55, stock flipping now and then. */
async function batch(a: Account): Promise<number> {
  const h0 = hourOf.get(a.name) ?? 0;
  hourOf.set(a.name, h0 + 5);
  const observations = [];
  for (let h = h0; h < h0 + 5; h++) {
    for (const [i, x] of a.series.entries()) {
      observations.push({ ...x, price: 45 + ((h * 7 + i * 3) % 11), currency: 'EUR', in_stock: (h + i) % 9 !== 0, observed_at: new Date(start + h * 3_600_000).toISOString() });
    }
  }
  const t0 = process.hrtime.bigint();
  const r = await app.inject({ method: 'POST', url: '/api/v1/prices', headers: a.headers, payload: { observations } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.statusCode !== 200) throw new Error(`ingest ${r.statusCode} ${r.body.slice(0, 300)}`);
  return ms;
}

// Warm-up: one batch each.
await batch(withRules);
await batch(without);
const ratios: number[] = [];
const rows: Record<string, number>[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [withRules, without] : [without, withRules];
  const ms: Record<string, number> = { rules: 0, none: 0 };
  for (let b = 0; b < BATCHES; b++) for (const a of order) ms[a.name]! += await batch(a);
  const rate = (name: string) => (BATCHES * 1000) / (ms[name]! / 1000);
  ratios.push(rate('rules') / rate('none'));
  rows.push({ round, rules_rows_s: Math.round(rate('rules')), none_rows_s: Math.round(rate('none')), ratio: Math.round((rate('rules') / rate('none')) * 1000) / 1000 });
}
const sorted = [...ratios].sort((a, b) => a - b);
const median = sorted.length % 2 ? sorted[sorted.length >> 1]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
const fired = await rt.db.query<{ n: number }>('select count(*)::int as n from alert_events');
console.table(rows);
const summary = { database: s.kind, rounds: ROUNDS, batches_per_round: BATCHES, ratio_median: Math.round(median * 1000) / 1000, ratio_min: Math.round(sorted[0]! * 1000) / 1000, ratio_max: Math.round(sorted[sorted.length - 1]! * 1000) / 1000, alert_events: Number(fired.rows[0]!.n), target: 0.8 };
console.log(summary);
writeResult(`alerts-ingest-${s.kind}`, { machine: machine(), summary, rounds: rows });
await app.close();
await rt.close();
await s.done();
