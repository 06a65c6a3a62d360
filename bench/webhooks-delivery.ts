/**
 * Webhook delivery (issue 9, docs/BENCHMARKS.md "Webhook delivery"), on each database of BENCH_DB:
 *
 *   sustained  a backlog of BENCH_WEBHOOK_EVENTS events (product.created) waiting behind a down
 *              endpoint; the endpoint is pointed at a fast receiver on 127.0.0.1 and one worker
 *              process delivers them: events/s from the change to the last arrival. Target on
 *              PostgreSQL: at least 500/s.
 *   latency    POST /prices at a steady BENCH_LATENCY_RATE per second (50), each a price change
 *              of one of BENCH_LATENCY_PRODUCTS products (20) in turn, from the request sent
 *              to the receiver holding the event verified (standardwebhooks): p50 / p99 over
 *              BENCH_LATENCY_EVENTS (1000). BENCH_EVENT_TYPE picks the event waited for:
 *              `price.changed` (default) or `alert.triggered` (a rule that fires on every price is
 *              created first). Target on PostgreSQL: p99 under 100 ms.
 *
 * Each part stops after BENCH_PART_TIMEOUT_S (300) and is recorded as failed; a failed
 * POST /prices is counted (failedPosts), not fatal.
 * PostgreSQL runs `pricehound serve` plus one `pricehound worker`; the embedded database one
 * `pricehound start` (the only way it can run). Run with `npm run bench:webhooks`.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import {
  cleanup,
  DATABASES,
  env,
  machine,
  realServerArgs,
  REAL_SERVER,
  sleep,
  table,
  workDir,
  writeResult,
} from './lib/common.js';
import { ROOT, type Server, startServer, track } from './lib/proc.js';
import { pgUrl, recreatePgDatabase } from './lib/seed.js';

const PG_DB = process.env.BENCH_PG_DB ?? 'ph_bench_webhooks';
/** No part may run longer than this (a hang fails the run instead of holding the machine). */
const PART_TIMEOUT_MS = env('BENCH_PART_TIMEOUT_S', 300) * 1000;
const SUSTAINED_EVENTS = env('BENCH_WEBHOOK_EVENTS', 5000);
const LATENCY_EVENTS = env('BENCH_LATENCY_EVENTS', 1000);
const LATENCY_RATE = env('BENCH_LATENCY_RATE', 50);
const LATENCY_PRODUCTS = Math.max(1, env('BENCH_LATENCY_PRODUCTS', 20));
const EVENT_TYPE = process.env.BENCH_EVENT_TYPE ?? 'price.changed';
if (EVENT_TYPE !== 'price.changed' && EVENT_TYPE !== 'alert.triggered')
  throw new Error('BENCH_EVENT_TYPE: price.changed or alert.triggered');

const BASE_ENV = {
  ALLOW_LOOPBACK_TARGETS: 'true',
  LOG_LEVEL: 'warn',
  // A failed attempt waits: the sustained backlog stays queued until the endpoint is fixed.
  WEBHOOK_RETRY_SCHEDULE: '10m',
  AUTH_FAILURE_LIMIT: '100000',
};

// ---- the receiver ----------------------------------------------------------------------------

interface Arrival {
  path: string;
  id: string;
  at: number;
  body: string;
  headers: Record<string, string>;
}

function startReceiver(): Promise<{
  url: string;
  arrivals: Arrival[];
  onArrival: (fn: (a: Arrival) => void) => void;
  close(): Promise<void>;
}> {
  const arrivals: Arrival[] = [];
  const listeners: ((a: Arrival) => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const a: Arrival = {
        path: req.url ?? '',
        id: String(req.headers['webhook-id']),
        at: performance.now(),
        body: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers as Record<string, string>,
      };
      res.writeHead(a.path === '/down' ? 500 : 204).end();
      arrivals.push(a);
      for (const fn of listeners) fn(a);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        arrivals,
        onArrival: (fn) => listeners.push(fn),
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      }),
    ),
  );
}

/** `work` or an error after PART_TIMEOUT_MS, so a hung part ends the run. */
async function bounded<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no result after ${PART_TIMEOUT_MS / 1000} s`)),
      PART_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

// ---- the service -----------------------------------------------------------------------------

interface Target {
  kind: 'pg' | 'pglite';
  env: Record<string, string>;
  dir?: string;
}

async function prepare(kind: 'pg' | 'pglite'): Promise<Target> {
  if (kind === 'pg') {
    await recreatePgDatabase(PG_DB);
    return { kind, env: { ...BASE_ENV, DATABASE_URL: pgUrl(PG_DB) } };
  }
  const dir = workDir('webhooks');
  return { kind, env: { ...BASE_ENV, DATABASE_URL: '', DATA_DIR: dir }, dir };
}

/** `pricehound keys create`, before any server holds the embedded database. */
function createKey(t: Target): string {
  const out = execFileSync(process.execPath, [REAL_SERVER, 'keys', 'create', '--json', '--plan', 'business'], {
    cwd: ROOT,
    env: { ...process.env, ...t.env },
    encoding: 'utf8',
  });
  return (JSON.parse(out) as { key: string }).key;
}

/** A `pricehound worker` (no HTTP): ready once it logs so. */
async function startWorker(t: Target, logFile: string): Promise<{ stop(): Promise<void> }> {
  const out = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, [REAL_SERVER, 'worker'], {
    cwd: ROOT,
    env: { ...process.env, ...t.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  await until(() => fs.readFileSync(logFile, 'utf8').includes('pricehound worker ready'), 60_000, 'the worker');
  return {
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function startService(t: Target, logDir: string): Promise<{ api: Server; stop(): Promise<void> }> {
  const args = realServerArgs();
  if (t.kind === 'pglite') {
    const api = track(await startServer({ name: 'start', args, env: t.env, logFile: path.join(logDir, 'start.log') }));
    return { api, stop: () => api.stop() };
  }
  args[args.length - 1] = 'serve';
  const api = track(await startServer({ name: 'serve', args, env: t.env, logFile: path.join(logDir, 'serve.log') }));
  const worker = await startWorker(t, path.join(logDir, 'worker.log'));
  return {
    api,
    async stop() {
      await worker.stop();
      await api.stop();
    },
  };
}

function client(base: string, key: string) {
  return async <T = Record<string, unknown>>(method: string, p: string, body?: object): Promise<T> => {
    const res = await fetch(`${base}/api/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
}

// ---- the runs --------------------------------------------------------------------------------

async function sustained(api: ReturnType<typeof client>, rx: Awaited<ReturnType<typeof startReceiver>>) {
  const ep = await api<{ id: string }>('POST', '/webhooks', {
    url: `${rx.url}/down`,
    event_types: ['product.created'],
  });
  await api('POST', '/products', { name: 'first', base_price: 1, currency: 'EUR' });
  await until(() => rx.arrivals.some((a) => a.path === '/down'), 30_000, 'the failed first attempt');
  for (let i = 0; i < SUSTAINED_EVENTS; i += 100) {
    const products = Array.from({ length: Math.min(100, SUSTAINED_EVENTS - i) }, (_, j) => ({
      name: `P ${i + j}`,
      base_price: 1,
      currency: 'EUR',
    }));
    await api('POST', '/products/batch', { products });
  }
  const total = SUSTAINED_EVENTS + 1;
  const t0 = performance.now();
  // A new URL forgets the failure: the backlog goes out at once.
  await api('PATCH', `/webhooks/${ep.id}`, { url: `${rx.url}/up` });
  const up = () => rx.arrivals.filter((a) => a.path === '/up');
  await until(() => up().length >= total, PART_TIMEOUT_MS, 'the backlog');
  const arrived = up();
  const seconds = (arrived[arrived.length - 1]!.at - t0) / 1000;
  const distinct = new Set(arrived.map((a) => a.id)).size;
  await api('DELETE', `/webhooks/${ep.id}`);
  return {
    events: total,
    distinct,
    seconds: Math.round(seconds * 100) / 100,
    eventsPerSecond: Math.round(total / seconds),
  };
}

async function latency(api: ReturnType<typeof client>, rx: Awaited<ReturnType<typeof startReceiver>>) {
  // Prices go round LATENCY_PRODUCTS products, as a shop's do: requests for one series queue on
  // its row, so one series at 50/s measures that queue, not delivery.
  const products: { id: string }[] = [];
  for (let i = 0; i < LATENCY_PRODUCTS; i++)
    products.push(
      await api<{ id: string }>('POST', '/products', { name: `Kettle ${i}`, base_price: 100, currency: 'EUR' }),
    );
  const competitor = await api<{ id: string }>('POST', '/competitors', {
    name: 'Rival',
    website: 'https://rival.example',
  });
  const observe = async (i: number, price: number) => {
    const r = await api<{ created: number; data: unknown[] }>('POST', '/prices', {
      observations: [
        { product_id: products[i % products.length]!.id, competitor_id: competitor.id, price, currency: 'EUR' },
      ],
    });
    // A refused item is answered inside a 200: counted as a failed request.
    if (r.created !== 1)
      throw new Error(`POST /prices refused the observation: ${JSON.stringify(r.data).slice(0, 300)}`);
    return r;
  };
  for (let i = 0; i < products.length; i++) await observe(i, 100); // each series' first price, before the rule and the endpoint
  if (EVENT_TYPE === 'alert.triggered') {
    await api('POST', '/alerts', {
      name: 'every price',
      competitor_id: competitor.id,
      condition: { type: 'price_above', threshold: 0, currency: 'EUR' },
      rearm: 'every_change',
    });
  }
  const ep = await api<{ id: string; secret: string }>('POST', '/webhooks', {
    url: `${rx.url}/latency`,
    event_types: [EVENT_TYPE],
  });
  const verifier = new Webhook(ep.secret);

  const sentAt = new Map<number, number>();
  const arrivedPrices = new Set<number>();
  const latencies: number[] = [];
  let bad = 0;
  rx.onArrival((a) => {
    if (a.path !== '/latency') return;
    try {
      const e = verifier.verify(a.body, a.headers) as {
        type: string;
        data: { new?: { price: number }; current?: { price: number } };
      };
      const price = EVENT_TYPE === 'price.changed' ? e.data.new!.price : e.data.current!.price;
      const sent = sentAt.get(Math.round(price * 100));
      if (sent === undefined || e.type !== EVENT_TYPE) bad++;
      else {
        latencies.push(a.at - sent);
        arrivedPrices.add(Math.round(price * 100));
      }
    } catch {
      bad++;
    }
  });
  const start = performance.now();
  const posts: Promise<unknown>[] = [];
  // How long POST /prices itself took (answer received): tells the API's share of the latency from delivery's.
  const postMs: number[] = [];
  let failedPosts = 0;
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const due = start + (i * 1000) / LATENCY_RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    // Rounded to cents as a double: 100 + 804 / 100 is 108.03999999999999, which the API refuses
    // (more than 4 decimals) item by item inside a 200.
    const price = Math.round((100 + (i + 1) / 100) * 100) / 100;
    sentAt.set(Math.round(price * 100), performance.now());
    // A failed request is counted, not thrown: the run goes on and reports it.
    const sent = performance.now();
    posts.push(
      observe(i, price)
        .then(() => postMs.push(performance.now() - sent))
        .catch((e: unknown) => {
          failedPosts++;
          if (failedPosts === 1) console.error('POST /prices failed:', String(e).slice(0, 300));
        }),
    );
  }
  await Promise.all(posts);
  // Events still missing after a minute are reported as missing (a percentile over what came).
  await until(() => latencies.length + bad + failedPosts >= LATENCY_EVENTS, 60_000, 'every event').catch(
    () => undefined,
  );
  const missing = LATENCY_EVENTS - latencies.length - bad - failedPosts;
  // Which requests' events never came (their index in the run), to tell a pattern from chance.
  const missingIndexes = [...sentAt.keys()]
    .filter((k) => !arrivedPrices.has(k))
    .map((k) => k - 10_001)
    .slice(0, 50);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pctOf = (xs: number[], p: number) =>
    Math.round(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! * 10) / 10;
  const pct = (p: number) => pctOf(sorted, p);
  const posted = [...postMs].sort((a, b) => a - b);
  return {
    eventType: EVENT_TYPE,
    events: LATENCY_EVENTS,
    ratePerSecond: LATENCY_RATE,
    verified: latencies.length,
    bad,
    failedPosts,
    missing,
    products: LATENCY_PRODUCTS,
    p50Ms: pct(50),
    p90Ms: pct(90),
    p95Ms: pct(95),
    p99Ms: pct(99),
    maxMs: pct(100),
    over100Ms: sorted.filter((x) => x > 100).length,
    postP50Ms: pctOf(posted, 50),
    postP99Ms: pctOf(posted, 99),
    missingIndexes,
  };
}

async function main() {
  const results: Record<string, unknown> = {
    machine: machine(),
    settings: { SUSTAINED_EVENTS, LATENCY_EVENTS, LATENCY_RATE, EVENT_TYPE },
  };
  const rows: Record<string, string | number>[] = [];
  for (const kind of DATABASES) {
    const t = await prepare(kind);
    const logDir = workDir(`webhooks-logs-${kind}`);
    const key = createKey(t);
    const rx = await startReceiver();
    console.log(`${kind}: starting the service`);
    const svc = await startService(t, logDir);
    console.log(`${kind}: running`);
    try {
      const api = client(svc.api.url, key);
      const s = await bounded(`${kind} sustained`, sustained(api, rx));
      console.log(`${kind}: sustained`, s);
      results[kind] = { sustained: s, loadavg: os.loadavg() };
      const l = await bounded(`${kind} latency`, latency(api, rx));
      results[kind] = { sustained: s, latency: l, loadavg: os.loadavg() };
      rows.push({
        database: kind,
        'events/s': s.eventsPerSecond,
        'backlog s': s.seconds,
        'latency p50 ms': l.p50Ms,
        'p90 ms': l.p90Ms,
        'p95 ms': l.p95Ms,
        'p99 ms': l.p99Ms,
        '>100 ms': l.over100Ms,
        'POST p50': l.postP50Ms,
        'POST p99': l.postP99Ms,
        'max ms': l.maxMs,
        verified: `${l.verified}/${l.events}`,
      });
    } catch (e) {
      // A part that failed or timed out is recorded; the other database still runs.
      console.error(`${kind}:`, e);
      results[kind] = { ...(results[kind] as object), error: String(e) };
    } finally {
      await svc.stop();
      await rx.close();
      if (t.dir) cleanup(t.dir);
      cleanup(logDir);
    }
  }
  console.log();
  table(rows);
  writeResult(`webhooks-delivery${process.env.BENCH_NAME ? `-${process.env.BENCH_NAME}` : ''}`, results);
}

await main();
// A timed-out part may leave its polling loop behind: end here rather than wait for it.
process.exit(0);
