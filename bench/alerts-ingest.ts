/**
 * `npm run bench:alerts` (issue 9): POST /api/v1/prices throughput with 100 enabled alert rules
 * on the account against an account with none, same data, interleaved in one run (the order of
 * the pair swapped every other round). The app runs in process (Fastify inject: the real routes,
 * validation and database, no sockets) on PostgreSQL (DATABASE_URL, a fresh schema dropped after)
 * or, without DATABASE_URL, on embedded PGlite in a temporary directory.
 * Target: rows/s with rules / rows/s without >= 0.8; the median ratio over rounds, with its min
 * and max. By default (the server's ALERT_INLINE_MAX, 100) a 1000-item batch with rules is
 * evaluated just after its commit (the worker's alert-backlog task, docs/alerts/firing.md,
 * "When rules are evaluated"; BENCH_ALERT_INLINE_MAX=1000 evaluates every batch in its
 * transaction instead). Deferred, the run evaluates
 * each batch's backlog right after its request, timed apart, and also reports the ratio with
 * that evaluation counted (with_evaluation_ratio) and the observations evaluated per second. Each account has 100 products at 2 competitors; a batch is 1000 observations, the
 * next 5 hours of every series, generated as shops behave (observe(): most hours repeat the
 * price, some move it a little, rare sales and stock-outs), the same stream for both accounts.
 * The 100 rules (rulesOf()) mix every price and stock type, account-wide and per product; most
 * observations fire nothing: the run reports the firings per observation.
 * Env: BENCH_ALERTS_ROUNDS=8  BENCH_ALERTS_BATCHES=3 (per account and round)
 */
import os from 'node:os';
import pg from 'pg';
import pino from 'pino';
import { drainAlertBacklog } from '../src/alerts/engine/backlog.js';
import { maintain } from '../src/db/pglite-maintenance.js';
import { buildApp } from '../src/app.js';
import { createKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config.js';
import { createRuntime } from '../src/runtime.js';
import { env, machine, writeResult } from './lib/common.js';
import { testStorage } from '../test/helpers/database.js';

const ROUNDS = Math.max(1, env('BENCH_ALERTS_ROUNDS', 8));
const BATCHES = Math.max(1, env('BENCH_ALERTS_BATCHES', 3));
const PRODUCTS = 100;

/** BENCH_STATEMENTS=1 (PostgreSQL): time spent in each statement, by its leading comment. */
const statements = new Map<string, { n: number; ms: number }>();
if (process.env.BENCH_STATEMENTS === '1') {
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    const text = typeof a[0] === 'string' ? a[0] : ((a[0] as { text?: string } | undefined)?.text ?? '');
    const name = /\/\* (\w+) \*\//.exec(text)?.[1] ?? text.slice(0, 40).replace(/\s+/g, ' ');
    const t0 = performance.now();
    const r = query.apply(this, a);
    if (r instanceof Promise) {
      void r.then(
        () => {
          const x = statements.get(name) ?? { n: 0, ms: 0 };
          statements.set(name, { n: x.n + 1, ms: x.ms + performance.now() - t0 });
        },
        () => undefined,
      );
    }
    return r;
  } as typeof pg.Client.prototype.query;
}

const s = await testStorage();
// BENCH_ALERT_INLINE_MAX: the server's ALERT_INLINE_MAX (unset: the server's default, 100: a 1000-item
// batch is evaluated just after its commit; 1000: every batch evaluated in its transaction).
const inline = process.env.BENCH_ALERT_INLINE_MAX;
const config = loadConfig({ AUTH_FAILURE_LIMIT: '1000000', ...(inline ? { ALERT_INLINE_MAX: inline } : {}), ...s.env });
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
  series: { product_id: string; competitor_id: string; base: number }[];
}

/** Product i's base price: 20 to 199.5 EUR, spread over the catalogue. */
const baseOf = (i: number) => 20 + ((i * 37) % 360) / 2;

/**
 * 100 rules as a shop would set them: 40 account-wide (changes of 10 % or more, undercut by 10 %,
 * a 30-day low, stock, not the cheapest) and 60 on one product each (thresholds 8 % off its
 * price, a 7-day low, a 5 % drop, stock), mostly re-armed on clear, some on a cooldown.
 */
function rulesOf(products: { id: string }[]): object[] {
  const wide = [
    { type: 'price_drop', percent: 10 },
    { type: 'price_rise', percent: 15 },
    { type: 'undercut', margin_percent: 10 },
    { type: 'lowest_in_days', days: 30 },
    { type: 'back_in_stock' },
    { type: 'out_of_stock' },
    { type: 'not_cheapest' },
    { type: 'price_drop', amount: 20 },
  ];
  const rules: object[] = [];
  for (let i = 0; i < 40; i++)
    rules.push({
      name: `wide ${i}`,
      condition: wide[i % wide.length],
      rearm: i % 4 === 3 ? 'cooldown' : 'on_clear',
      ...(i % 4 === 3 ? { cooldown_seconds: 3600 } : {}),
    });
  for (let i = 0; i < 60; i++) {
    const product = products[(i * 7) % products.length]!;
    const base = baseOf((i * 7) % products.length);
    const kinds = [
      { type: 'price_below', threshold: Math.round(base * 0.92 * 100) / 100 },
      { type: 'price_above', threshold: Math.round(base * 1.08 * 100) / 100 },
      { type: 'lowest_in_days', days: 7 },
      { type: 'price_drop', percent: 5 },
      { type: 'back_in_stock' },
      { type: 'undercut', margin_amount: Math.round(base * 0.05 * 100) / 100 },
    ];
    rules.push({
      name: `product ${i}`,
      product_id: product.id,
      condition: kinds[i % kinds.length],
      rearm: i % 5 === 4 ? 'every_change' : 'on_clear',
    });
  }
  return rules;
}

async function account(name: string, rules: boolean): Promise<Account> {
  const k = await createKey(rt.db, { plan: 'business', accountId: null });
  const headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
  const competitors = [
    await post(headers, '/api/v1/competitors', { name: 'A', website: 'https://a.example' }),
    await post(headers, '/api/v1/competitors', { name: 'B', website: 'https://b.example' }),
  ];
  const products = [];
  for (let i = 0; i < PRODUCTS; i++)
    products.push(await post(headers, '/api/v1/products', { name: `P${i}`, base_price: baseOf(i), currency: 'EUR' }));
  if (rules) for (const r of rulesOf(products)) await post(headers, '/api/v1/alerts', r);
  return {
    name,
    headers,
    series: products.flatMap((p, i) =>
      competitors.map((c, j) => ({ product_id: p.id, competitor_id: c.id, base: baseOf(i) * (j === 0 ? 1.02 : 0.99) })),
    ),
  };
}

/** A deterministic number in [0, 1) for (hour, series, salt): both accounts get the same stream. */
function rand(h: number, i: number, salt: number): number {
  let x = (h * 73856093) ^ (i * 19349663) ^ (salt * 83492791);
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b);
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b);
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
}

/**
 * Series i's observation at hour h, as a monitored shop behaves: the price holds for most hours
 * (a change in about 1 hour of 12, up to 3 % either way), a sale of 15 % about once in 300
 * hours for 1 to 6 hours, out of stock about 1 hour in 250.
 */
function observe(h: number, i: number, base: number): { price: number; in_stock: boolean } {
  const epoch = Math.floor((h + Math.floor(rand(0, i, 1) * 12)) / 12);
  const drift = 1 + (rand(epoch, i, 3) - 0.5) * 0.06;
  const sale = rand(Math.floor(h / 6), i, 4) < 1 / 50 ? 0.85 : 1;
  return { price: Math.round(base * drift * sale * 100) / 100, in_stock: rand(h, i, 5) >= 1 / 250 };
}

const withRules = await account('rules', true);
const without = await account('none', false);
const start = Date.UTC(2025, 0, 1);
const hourOf = new Map<string, number>();

/**
 * One batch: the next 5 hours of every series (1000 observations). Its alert evaluation, queued
 * by the request (over ALERT_INLINE_MAX observations, docs/alerts/firing.md "Large batches"),
 * is then run as the worker's alert-backlog task runs it and timed apart: `ms` is the request,
 * `evalMs` the evaluation after its commit.
 */
async function batch(a: Account): Promise<{ ms: number; evalMs: number }> {
  const h0 = hourOf.get(a.name) ?? 0;
  hourOf.set(a.name, h0 + 5);
  const observations = [];
  for (let h = h0; h < h0 + 5; h++) {
    for (const [i, x] of a.series.entries()) {
      observations.push({
        product_id: x.product_id,
        competitor_id: x.competitor_id,
        ...observe(h, i, x.base),
        currency: 'EUR',
        observed_at: new Date(start + h * 3_600_000).toISOString(),
      });
    }
  }
  const t0 = process.hrtime.bigint();
  const r = await app.inject({ method: 'POST', url: '/api/v1/prices', headers: a.headers, payload: { observations } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.statusCode !== 200) throw new Error(`ingest ${r.statusCode} ${r.body.slice(0, 300)}`);
  const e0 = process.hrtime.bigint();
  await drainAlertBacklog(rt.db);
  return { ms, evalMs: Number(process.hrtime.bigint() - e0) / 1e6 };
}

// Warm-up: 30 hours of history each; the first sight of every series (in stock, its first low)
// fires here, as it does once in a shop's first day, and the rounds measure the days after.
const WARMUP = Math.max(1, env('BENCH_ALERTS_WARMUP', 6));
for (let b = 0; b < WARMUP; b++) {
  await batch(withRules);
  await batch(without);
}
/**
 * A service that has run for a while has table statistics: PostgreSQL's autovacuum gathers them
 * within a minute, the embedded-maintenance task every 10 s (src/db/pglite-maintenance.ts). A run
 * of a few minutes on fresh tables would otherwise measure plans made on nearly empty tables.
 * Taken after the warm-up, and on the embedded engine after each round, as its task would.
 */
const steadyState = async (afterWarmup: boolean) => {
  if (rt.db.kind === 'pglite') await maintain(rt.db);
  else if (afterWarmup) await rt.db.exec('analyze');
};
await steadyState(true);
const load = [os.loadavg()];
const firedBefore = Number(
  (await rt.db.query<{ n: number }>('select count(*)::int as n from alert_events')).rows[0]!.n,
);
const hoursBefore = hourOf.get('rules') ?? 0;
const measuredFrom = (await rt.db.query<{ now: Date }>('select clock_timestamp() as now')).rows[0]!.now;
const ratios: number[] = [];
const endToEnd: number[] = [];
const rows: Record<string, number>[] = [];
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length % 2
    ? sorted[sorted.length >> 1]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const r3 = (x: number) => Math.round(x * 1000) / 1000;
let evaluated = { ms: 0, observations: 0 };
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [withRules, without] : [without, withRules];
  const ms: Record<string, number> = { rules: 0, none: 0 };
  const evalMs: Record<string, number> = { rules: 0, none: 0 };
  for (let b = 0; b < BATCHES; b++) {
    for (const a of order) {
      const x = await batch(a);
      ms[a.name]! += x.ms;
      evalMs[a.name]! += x.evalMs;
    }
  }
  const rate = (name: string, withEval = false) =>
    (BATCHES * 1000) / ((ms[name]! + (withEval ? evalMs[name]! : 0)) / 1000);
  ratios.push(rate('rules') / rate('none'));
  endToEnd.push(rate('rules', true) / rate('none', true));
  evaluated = { ms: evaluated.ms + evalMs.rules!, observations: evaluated.observations + BATCHES * 1000 };
  load.push(os.loadavg());
  rows.push({
    round,
    load1: Math.round(os.loadavg()[0]! * 10) / 10,
    rules_rows_s: Math.round(rate('rules')),
    none_rows_s: Math.round(rate('none')),
    ratio: r3(rate('rules') / rate('none')),
    with_evaluation_ratio: r3(rate('rules', true) / rate('none', true)),
  });
  await steadyState(false);
}
const sorted = [...ratios].sort((a, b) => a - b);
const fired = await rt.db.query<{ n: number }>('select count(*)::int as n from alert_events');
const byType = await rt.db.query<{ condition_type: string; n: number }>(
  'select condition_type, count(*)::int as n from alert_events where created_at >= $1 group by 1 order by 2 desc',
  [measuredFrom],
);
const observed = ((hourOf.get('rules') ?? 0) - hoursBefore) * withRules.series.length;
const firedMeasured = Number(fired.rows[0]!.n) - firedBefore;
const firingRate = firedMeasured / observed;
console.table(rows);
const summary = {
  database: s.kind,
  alert_inline_max: config.alertInlineMax,
  rounds: ROUNDS,
  batches_per_round: BATCHES,
  ratio_median: r3(median(ratios)),
  with_evaluation_ratio_median: r3(median(endToEnd)),
  with_evaluation_ratio_min: r3(Math.min(...endToEnd)),
  with_evaluation_ratio_max: r3(Math.max(...endToEnd)),
  evaluated_observations_per_s: Math.round(evaluated.observations / (evaluated.ms / 1000)),
  ratio_min: Math.round(sorted[0]! * 1000) / 1000,
  ratio_max: Math.round(sorted[sorted.length - 1]! * 1000) / 1000,
  warmup_batches: WARMUP,
  alert_events_measured: firedMeasured,
  observations_measured: observed,
  firings_per_observation: Math.round(firingRate * 10000) / 10000,
  load1_min: Math.min(...load.map((l) => l[0]!)),
  load1_max: Math.max(...load.map((l) => l[0]!)),
  firings_by_type: Object.fromEntries(byType.rows.map((r) => [r.condition_type, Number(r.n)])),
  target: 0.8,
};
console.log(summary);
if (statements.size > 0)
  console.table(
    [...statements]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, 20)
      .map(([name, x]) => ({ name, n: x.n, ms: Math.round(x.ms), per_call_ms: Math.round((x.ms / x.n) * 10) / 10 })),
  );
writeResult(`alerts-ingest-${s.kind}${config.alertInlineMax < 1000 ? '-deferred' : ''}`, {
  machine: machine(),
  summary,
  rounds: rows,
});
await app.close();
await rt.close();
await s.cleanup();
