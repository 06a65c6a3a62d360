/**
 * `npm run bench:prices` (issue 4): on the 10-million-observation data set of
 * `npm run bench:prices-seed` (seeded first if it is missing), the real server
 * (`node dist/cli/main.js start`) against the same SQL run directly through the same driver
 * (src/db/open.ts: a pg pool with prepared statements, or PGlite on its worker thread), in one run:
 *   history  GET /api/v1/products/{id}/prices?interval=day over the data set's year, p50/p95,
 *            vs the statement of the history query builder; target endpoint p95 / SQL p95 <= 2
 *   trends   GET /api/v1/products/{id}/trends vs trendsQuery(); same target
 *   ingest   POST /api/v1/prices, 1000 observations a request, a few clients at once, rows/s,
 *            vs a raw multi-row INSERT of rows of the same shape; target API / INSERT >= 0.5
 * Each round measures every target once (reads first, the pair's order swapped every other
 * round); ratios are per round, then the median. Ingestion writes to products of its own
 * (no history; emptied at the start of a run), so it does not change what the reads read.
 *
 * PostgreSQL: server and bench both connected for the whole run (rate-limit counters in Redis,
 * as shipped). PGlite is single-process: each round has a server phase (API targets) and a
 * direct phase (the bench opens the same DATA_DIR after the server stopped, SQL targets), the
 * phases' order swapped every other round. Both phases start from a freshly opened database.
 *
 * Env: BENCH_DB=pg|pglite|pg,pglite  BENCH_ROUNDS=2  BENCH_PRICES_REQUESTS=200 (per read target
 *      and round, fewer when BENCH_PRICES_MAX_SECONDS=60 run out first)  BENCH_PRICES_WARMUP=10  BENCH_PRICES_CONCURRENCY=1 (read requests in flight)
 *      BENCH_PRICES_INGEST_BATCHES=24 (per ingest target and round)  BENCH_PRICES_INGEST_CLIENTS=4
 *      BENCH_LOG_LEVEL (server's LOG_LEVEL, default info)  BENCH_PROFILE=1 (server CPU profile)
 *      BENCH_PRICES_ONLY=history,trends,ingest  BLOCKS=0 / TEXTS=0 / SPANS=0 (do not build the trends'
 *      blocks / the history's month texts / the trends' spans of today first)  and BENCH_PRICES_* of bench/lib/prices-data.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createKey } from '../src/auth/keys.js';
import type { Database } from '../src/db/types.js';
import { historyRange } from '../src/prices/history/params.js';
import { historyQuery } from '../src/prices/history/sql.js';
import { trendsQuery } from '../src/prices/trends/sql.js';
import { buildPriceBlocks } from '../src/prices/trends/blocks.js';
import { buildMonthTexts } from '../src/prices/history/month-texts.js';
import { buildPriceSpans, utcMidnight } from '../src/prices/trends/spans.js';
import type { ProductsBuild } from '../src/prices/passes.js';
import { inBatches } from './lib/batches.js';
import { cleanup, DATABASES, env, machine, realServerArgs, table, workDir, writeResult } from './lib/common.js';
import { percentile } from './lib/load.js';
import {
  ACCOUNT_NAME,
  type Dataset,
  existingSeed,
  type Kind,
  loadDataset,
  openBenchDb,
  PGLITE_DATA_DIR,
  PRICES_PG_DB,
  rawInsert,
  type SeedInfo,
  seedPrices,
} from './lib/prices-data.js';
import { cpuDuring, ROOT, rssMiB, sampleRss, type Server, startServer, track } from './lib/proc.js';
import { pgUrl, REDIS_URL } from './lib/seed.js';

/**
 * What the server's passes build (blocks, month texts) for every product, 50 products a
 * transaction, in two connections at once on PostgreSQL (on a 50 M set a single pass took 6-20
 * minutes), as the server's tasks would in their first hour: nothing when it is all there.
 */
async function buildForEveryProduct(kind: Kind, db: Database, build: ProductsBuild): Promise<{ rows: number }> {
  const ids = (await db.query<{ id: string }>('select id from products order by id')).rows.map((r) => r.id);
  const before = new Date();
  let rows = 0;
  await inBatches(
    db,
    () => openBenchDb(kind),
    ids,
    { size: 50, jobs: kind === 'pg' ? 2 : 1 },
    async (tx, batch) => {
      const n = await build(tx, batch, before);
      rows += n;
    },
  );
  return { rows };
}

const r2 = (n: number) => Math.round(n * 100) / 100;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const SETTINGS = {
  rounds: Math.max(1, Math.floor(env('BENCH_ROUNDS', 2))),
  requests: env('BENCH_PRICES_REQUESTS', 200),
  /** A read target's run stops starting requests after this many seconds (at least 20 requests). */
  maxSeconds: env('BENCH_PRICES_MAX_SECONDS', 60),
  warmup: env('BENCH_PRICES_WARMUP', 10),
  concurrency: Math.max(1, env('BENCH_PRICES_CONCURRENCY', 1)),
  ingestBatches: env('BENCH_PRICES_INGEST_BATCHES', 24),
  ingestClients: Math.max(1, env('BENCH_PRICES_INGEST_CLIENTS', 4)),
  batchSize: 1000,
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
};
const ONLY = new Set((process.env.BENCH_PRICES_ONLY ?? 'history,trends,ingest').split(',').map((s) => s.trim()));
const LABEL = { pg: 'PostgreSQL+Redis', pglite: 'PGlite' } as const;

const dir = workDir('prices');
const runId = Date.now();

// ---------------------------------------------------------------------------------------------
// Measurements

interface Latencies {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

function summarise(ms: number[]): Latencies {
  const s = Float64Array.from(ms).sort();
  return {
    n: s.length,
    p50: r2(percentile(s, 50)),
    p95: r2(percentile(s, 95)),
    p99: r2(percentile(s, 99)),
    max: r2(s[s.length - 1] ?? NaN),
    mean: r2(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

/**
 * Runs call(0..n-1) with `concurrency` in flight, starting no new call after `maxS` seconds
 * (but at least 20 calls); returns each call's latency in ms.
 */
async function closedLoop(
  n: number,
  concurrency: number,
  call: (i: number) => Promise<void>,
  maxS = Infinity,
): Promise<number[]> {
  const lat: number[] = [];
  const deadline = performance.now() + maxS * 1000;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n && (i < 20 || performance.now() < deadline); i = next++) {
      const t0 = performance.now();
      await call(i);
      lat.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return lat;
}

/** What a target does: a read (request i) or an ingestion batch (client, batch number). */
interface Side {
  read?: (i: number) => Promise<number>;
  ingest?: (client: number, batch: number) => Promise<void>;
}

interface Run {
  round: number;
  load1: number;
  latency?: Latencies;
  rowsPerS?: number;
  seconds?: number;
  /** Reads: average size of the answer (API: bytes of JSON; SQL: rows). */
  bytes?: number;
  rows?: number;
  /** CPU ms per request or per 1000 rows: the process running the target (server or bench), PostgreSQL's backends. */
  cpuMsPerOp: { process: number; postgres: number };
  rssPeakMiB: number;
}

interface TargetResult {
  id: string;
  db: Kind;
  what: 'history' | 'trends' | 'ingest';
  side: 'api' | 'sql';
  runs: Run[];
}

const results: TargetResult[] = [];
const result = (db: Kind, what: TargetResult['what'], side: TargetResult['side']) => {
  const id = `${what}-${side}-${db}`;
  let r = results.find((x) => x.id === id);
  if (!r) results.push((r = { id, db, what, side, runs: [] }));
  return r;
};

/** Products read in round r: a different stride of the catalogue each round, the same for api and sql. */
const readProduct = (ds: Dataset, round: number, i: number) =>
  ds.productIds[(round * 7919 + i * 37) % ds.productIds.length]!;

async function measureRead(
  db: Kind,
  what: 'history' | 'trends',
  side: 'api' | 'sql',
  round: number,
  s: Side,
  pid: number,
) {
  const read = s.read!;
  const n = SETTINGS.requests;
  // Warm-up on other products than the measured ones (JIT, connections, prepared statements).
  await closedLoop(SETTINGS.warmup, SETTINGS.concurrency, async (i) => void (await read(n + i)));
  let bytes = 0;
  const load1 = r2(os.loadavg()[0]!);
  const stopRss = sampleRss(pid, 100);
  const { value: lat, cpu } = await cpuDuring(pid, db === 'pg' ? PRICES_PG_DB : undefined, () =>
    closedLoop(
      n,
      SETTINGS.concurrency,
      async (i) => {
        bytes += await read(i);
      },
      SETTINGS.maxSeconds,
    ),
  );
  const rss = stopRss();
  const latency = summarise(lat);
  const run: Run = {
    round,
    load1,
    latency,
    ...(side === 'api' ? { bytes: Math.round(bytes / lat.length) } : { rows: Math.round(bytes / lat.length) }),
    cpuMsPerOp: {
      process: r2((pid === process.pid ? cpu.loadgen : cpu.server) / lat.length),
      postgres: r2(cpu.postgres / lat.length),
    },
    rssPeakMiB: rss.peak,
  };
  result(db, what, side).runs.push(run);
  console.log(
    `  ${`${what} ${side}`.padEnd(12)} p50 ${latency.p50} ms  p95 ${latency.p95} ms  p99 ${latency.p99} ms  ` +
      `(${lat.length} requests, ${side === 'api' ? `${run.bytes} B` : `${run.rows} rows`} each, CPU ${run.cpuMsPerOp.process} ms + postgres ${run.cpuMsPerOp.postgres} ms per request, load avg ${load1})`,
  );
}

async function measureIngest(db: Kind, side: 'api' | 'sql', round: number, s: Side, pid: number, next: () => number) {
  const ingest = s.ingest!;
  const clients = SETTINGS.ingestClients;
  const perClient = Math.max(1, Math.ceil(SETTINGS.ingestBatches / clients));
  // One warm-up batch per client.
  await Promise.all(Array.from({ length: clients }, (_, c) => ingest(c, next())));
  const load1 = r2(os.loadavg()[0]!);
  const stopRss = sampleRss(pid, 100);
  const t0 = performance.now();
  const { cpu } = await cpuDuring(pid, db === 'pg' ? PRICES_PG_DB : undefined, () =>
    Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let b = 0; b < perClient; b++) await ingest(c, next());
      }),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const rss = stopRss();
  const rows = clients * perClient * SETTINGS.batchSize;
  const per = rows / 1000;
  const run: Run = {
    round,
    load1,
    rowsPerS: Math.round(rows / seconds),
    seconds: r2(seconds),
    cpuMsPerOp: {
      process: r2((pid === process.pid ? cpu.loadgen : cpu.server) / per),
      postgres: r2(cpu.postgres / per),
    },
    rssPeakMiB: rss.peak,
  };
  result(db, 'ingest', side).runs.push(run);
  console.log(
    `  ${`ingest ${side}`.padEnd(12)} ${run.rowsPerS} rows/s  (${rows} rows in ${run.seconds} s, ${clients} clients; ` +
      `CPU per 1000 rows ${run.cpuMsPerOp.process} ms + postgres ${run.cpuMsPerOp.postgres} ms, load avg ${load1})`,
  );
}

// ---------------------------------------------------------------------------------------------
// The two sides

/** The rows of ingestion batch `seq` of client `c`: one observation of each series of the client's products. */
function ingestRows(ds: Dataset & { ingestCurrencies: string[] }, c: number, seq: number, baseMs: number) {
  const perClient = Math.max(1, Math.floor(SETTINGS.batchSize / ds.competitorIds.length));
  const at = new Date(baseMs + seq * 1000).toISOString();
  const rows: {
    product_id: string;
    competitor_id: string;
    price: number;
    currency: string;
    in_stock: boolean;
    observed_at: string;
  }[] = [];
  for (let k = 0; rows.length < SETTINGS.batchSize; k++) {
    const pi = (c * perClient + (k % perClient)) % ds.ingestProductIds.length;
    const ci = Math.floor(k / perClient) % ds.competitorIds.length;
    const r = rows.length;
    // About one observation in ten differs from its series' previous one (a price change).
    const level = Math.floor((seq + ((r * 7) % 10)) / 10);
    rows.push({
      product_id: ds.ingestProductIds[pi]!,
      competitor_id: ds.competitorIds[ci]!,
      price: 20 + ((pi * 13 + ci * 7) % 300) + (level % 5) * 0.5,
      currency: ds.ingestCurrencies[pi]!,
      in_stock: (seq + r) % 50 !== 0,
      observed_at: at,
    });
  }
  return rows;
}

function apiSide(
  server: Server,
  key: string,
  ds: Dataset & { ingestCurrencies: string[] },
  round: number,
  historyPath: (id: string) => string,
  baseMs: number,
) {
  const pool = new Pool(server.url, {
    connections: Math.max(SETTINGS.concurrency, SETTINGS.ingestClients),
    pipelining: 1,
  });
  const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
  const get = async (p: string) => {
    const r = await pool.request({ method: 'GET', path: p, headers });
    const body = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`GET ${p}: ${r.statusCode} ${body.slice(0, 300)}`);
    return body.length;
  };
  return {
    history: { read: (i) => get(historyPath(readProduct(ds, round, i))) },
    trends: { read: (i) => get(`/api/v1/products/${readProduct(ds, round, i)}/trends`) },
    ingest: {
      async ingest(c, seq) {
        const body = JSON.stringify({ observations: ingestRows(ds, c, seq, baseMs), atomic: false });
        const r = await pool.request({
          method: 'POST',
          path: '/api/v1/prices',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        });
        const text = await r.body.text();
        const created = /"created":(\d+)/.exec(text.slice(-200))?.[1];
        if (r.statusCode !== 200 || Number(created) !== SETTINGS.batchSize)
          throw new Error(`POST /prices: ${r.statusCode} created ${created}: ${text.slice(0, 300)}`);
      },
    },
    close: () => pool.close(),
  } satisfies Record<'history' | 'trends' | 'ingest', Side> & { close: () => Promise<void> };
}

function sqlSide(
  db: Database,
  ds: Dataset & { ingestCurrencies: string[] },
  round: number,
  historySql: (id: string) => { text: string; values: unknown[] },
  baseMs: number,
): { history: Side; trends: Side; ingest: Side } {
  const insert = rawInsert(SETTINGS.batchSize);
  // The server's answer is JSON text; the driver's is rows: count their size as JSON for the record.
  const read = async (q: { text: string; values: unknown[] }) => {
    const r = await db.query(q.text, q.values);
    if (r.rows.length === 0) throw new Error('the statement returned no rows');
    return r.rows.length;
  };
  return {
    history: { read: (i) => read(historySql(readProduct(ds, round, i))) },
    trends: { read: (i) => read(trendsQuery(ds.accountId, readProduct(ds, round, i))) },
    ingest: {
      async ingest(c, seq) {
        const params: unknown[] = [ds.accountId];
        for (const o of ingestRows(ds, c, seq, baseMs))
          params.push(o.product_id, o.competitor_id, o.price, o.currency, o.in_stock, o.observed_at);
        const r = await db.query(insert, params);
        if (r.rowCount !== SETTINGS.batchSize) throw new Error(`raw insert wrote ${r.rowCount} rows`);
      },
    },
  };
}

/**
 * The history endpoint's statement for one product, as the route builds it: the query string
 * checked by historyRange (src/prices/history/params.ts), then historyQuery.
 */
function historyStatement(
  accountId: string,
  from: string,
  to: string,
): (productId: string) => { text: string; values: unknown[] } {
  const range = historyRange({ interval: 'day', from, to });
  if (range.interval === 'raw') throw new Error('interval=day expected');
  const interval = range.interval;
  return (productId) => historyQuery({ ...range, interval, productId, accountId });
}

// ---------------------------------------------------------------------------------------------

/** Empties the ingestion products (observations, series, changes) so every run starts alike. */
async function resetIngest(db: Database, ds: Dataset) {
  for (const table of ['price_changes', 'price_series', 'price_observations']) {
    await db.query(`delete from ${table} where product_id = any($1::text[])`, [ds.ingestProductIds]);
  }
}

async function prepare(
  kind: Kind,
): Promise<{ seed: SeedInfo; ds: Dataset & { ingestCurrencies: string[] }; key: string }> {
  let seed = await existingSeed(kind);
  if (!seed) {
    console.log(`${LABEL[kind]}: no data set with the current parameters; seeding it (npm run bench:prices-seed)`);
    seed = await seedPrices(kind);
  }
  const db = await openBenchDb(kind);
  try {
    const ds = await loadDataset(db);
    // The trends' blocks of whole days (migration 0022), as the server's task would build them in
    // its first hour: all of them on a data set seeded before 0022, none when they are there;
    // BLOCKS=0 skips them (a run of the history alone).
    const t0 = performance.now();
    const blocks = process.env.BLOCKS === '0' ? { rows: 0 } : await buildForEveryProduct(kind, db, buildPriceBlocks);
    if (blocks.rows > 0) {
      // Statistics for the new rows now, as the seed's own `vacuum analyze`: autovacuum may be
      // busy with the large tables for a while, and a block partition planned from its empty
      // state's statistics reads its rows through the account's index (51-97 ms a trends request
      // at 50 M observations instead of ~15).
      await db.query('analyze price_blocks');
      console.log(
        `${LABEL[kind]}: ${blocks.rows} blocks of whole days built (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
    }
    // The UTC days' month texts (migration 0025), likewise, unless TEXTS=0 (to measure the
    // history from the day rows alone).
    if (process.env.TEXTS !== '0') {
      const t1 = performance.now();
      const texts = await buildForEveryProduct(kind, db, buildMonthTexts);
      if (texts.rows > 0) {
        await db.query('analyze price_day_texts');
        console.log(
          `${LABEL[kind]}: ${texts.rows} month texts built (${((performance.now() - t1) / 1000).toFixed(1)} s)`,
        );
      }
    }
    // The trends' spans of today's midnight (migration 0027), likewise, unless SPANS=0 (to
    // measure the trends from the blocks). A run that crosses midnight reads the blocks after it.
    if (process.env.SPANS !== '0') {
      const t2 = performance.now();
      const d1 = utcMidnight(Date.now());
      const spans = await buildForEveryProduct(kind, db, (tx, ids) => buildPriceSpans(tx, ids, d1));
      if (spans.rows > 0) {
        await db.query('analyze price_spans');
        console.log(
          `${LABEL[kind]}: ${spans.rows} span rows built (${((performance.now() - t2) / 1000).toFixed(1)} s)`,
        );
      }
    }
    const cur = await db.query<{ currency: string }>(
      `select currency from products where id = any($1::text[]) order by sku`,
      [ds.ingestProductIds],
    );
    // A fresh key per run (keys are stored hashed, so the seed's cannot be reused), business plan.
    const { key } = await createKey(db, { plan: 'business', name: ACCOUNT_NAME, accountId: ds.accountId });
    await resetIngest(db, ds);
    return { seed, ds: { ...ds, ingestCurrencies: cur.rows.map((r) => r.currency) }, key };
  } finally {
    await db.close();
  }
}

const stoppers: (() => Promise<void>)[] = [];

async function start(kind: Kind): Promise<Server> {
  const envFor: Record<string, string> =
    kind === 'pg'
      ? { DATABASE_URL: pgUrl(PRICES_PG_DB), REDIS_URL, REDIS_PREFIX: `pricehound-bench-prices-${runId}:` }
      : { DATA_DIR: PGLITE_DATA_DIR, DATABASE_URL: '' };
  const s = track(
    await startServer({
      name: `prices-${kind}`,
      args: realServerArgs(`prices-${kind}`),
      env: { ...envFor, LOG_LEVEL: SETTINGS.logLevel },
      logFile: path.join(dir, `server-${kind}.log`),
      timeoutMs: 300_000,
    }),
  );
  return s;
}

const seeds: Partial<Record<Kind, SeedInfo>> = {};
const servers: Record<string, { readyMs: number[]; rssIdleMiB: number[] }> = {};

try {
  console.log(
    `bench:prices  ${SETTINGS.rounds} rounds; reads: ${SETTINGS.requests} requests per target and round, ${SETTINGS.concurrency} in flight; ` +
      `ingestion: ${SETTINGS.ingestBatches} batches of ${SETTINGS.batchSize} per target and round, ${SETTINGS.ingestClients} clients; work dir ${dir}`,
  );
  for (const kind of DATABASES) {
    const { seed, ds, key } = await prepare(kind);
    seeds[kind] = seed;
    console.log(
      `\n${LABEL[kind]}: ${seed.observations.toLocaleString('en')} observations seeded ${seed.seededAt}, ${ds.productIds.length} products`,
    );
    const from = seed.startAt;
    const to = seed.endAt;
    const historyPath = (id: string) =>
      `/api/v1/products/${id}/prices?interval=day&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    const historySql = historyStatement(ds.accountId, from, to);
    // Ingestion times: a day ago onwards, one second per batch (at most 5 minutes ahead of now is accepted).
    const baseMs = Date.now() - 86_400_000;
    let seq = 0;
    const next = () => seq++;
    servers[kind] = { readyMs: [], rssIdleMiB: [] };

    const reads = (['history', 'trends'] as const).filter((w) => ONLY.has(w));
    type Sides = ReturnType<typeof sqlSide>;
    /** Every read target on each of `sides` in turn, then ingestion on each. */
    const measure = async (round: number, sides: { name: 'api' | 'sql'; s: Sides; pid: number }[]) => {
      for (const w of reads) for (const x of sides) await measureRead(kind, w, x.name, round, x.s[w], x.pid);
      if (ONLY.has('ingest')) for (const x of sides) await measureIngest(kind, x.name, round, x.s.ingest, x.pid, next);
    };
    const startApi = async () => {
      const server = await start(kind);
      servers[kind]!.readyMs.push(Math.round(server.readyMs));
      await new Promise((r) => setTimeout(r, 1000));
      servers[kind]!.rssIdleMiB.push(rssMiB(server.pid));
      return server;
    };
    const sidesOf = (round: number) => (round % 2 === 0 ? (['api', 'sql'] as const) : (['sql', 'api'] as const));

    if (kind === 'pg') {
      // Server and direct connection side by side: each read target api then sql (swapped every other round).
      const server = await startApi();
      stoppers.push(() => server.stop());
      const db = await openBenchDb(kind);
      stoppers.push(() => db.close());
      for (let round = 0; round < SETTINGS.rounds; round++) {
        console.log(`round ${round + 1} of ${SETTINGS.rounds}`);
        const api = apiSide(server, key, ds, round, historyPath, baseMs);
        const sql = sqlSide(db, ds, round, historySql, baseMs);
        try {
          await measure(
            round,
            sidesOf(round).map((name) =>
              name === 'api' ? { name, s: api, pid: server.pid } : { name, s: sql, pid: process.pid },
            ),
          );
        } finally {
          await api.close();
        }
      }
      await stoppers.pop()!();
      await stoppers.pop()!();
    } else {
      // One process at a time on DATA_DIR: a server phase and a direct phase per round.
      for (let round = 0; round < SETTINGS.rounds; round++) {
        console.log(`round ${round + 1} of ${SETTINGS.rounds}`);
        for (const phase of sidesOf(round)) {
          if (phase === 'api') {
            const server = await startApi();
            const api = apiSide(server, key, ds, round, historyPath, baseMs);
            try {
              await measure(round, [{ name: 'api', s: api, pid: server.pid }]);
            } finally {
              await api.close();
              await server.stop();
            }
          } else {
            const db = await openBenchDb(kind);
            try {
              await measure(round, [{ name: 'sql', s: sqlSide(db, ds, round, historySql, baseMs), pid: process.pid }]);
            } finally {
              await db.close();
            }
          }
        }
      }
    }
  }

  // Ratios per round, then the median.
  const ratios: Record<string, unknown> = {};
  const rows: Record<string, string | number>[] = [];
  for (const kind of DATABASES) {
    for (const what of ['history', 'trends', 'ingest'] as const) {
      const a = results.find((r) => r.id === `${what}-api-${kind}`);
      const b = results.find((r) => r.id === `${what}-sql-${kind}`);
      if (!a || !b) continue;
      const per = a.runs.map((ra, i) => {
        const rb = b.runs[i]!;
        return what === 'ingest' ? r2(ra.rowsPerS! / rb.rowsPerS!) : r2(ra.latency!.p95 / rb.latency!.p95);
      });
      const m = r2(median(per));
      const ok = what === 'ingest' ? m >= 0.5 : m <= 2;
      const med = (xs: number[]) => r2(median(xs));
      const api =
        what === 'ingest'
          ? { rowsPerS: med(a.runs.map((r) => r.rowsPerS!)) }
          : { p50: med(a.runs.map((r) => r.latency!.p50)), p95: med(a.runs.map((r) => r.latency!.p95)) };
      const sql =
        what === 'ingest'
          ? { rowsPerS: med(b.runs.map((r) => r.rowsPerS!)) }
          : { p50: med(b.runs.map((r) => r.latency!.p50)), p95: med(b.runs.map((r) => r.latency!.p95)) };
      ratios[`${what}-${kind}`] = {
        ratio: m,
        rounds: per,
        target: what === 'ingest' ? '>= 0.5' : '<= 2',
        met: ok,
        api,
        sql,
      };
      rows.push({
        database: LABEL[kind],
        what: what === 'ingest' ? 'ingest rows/s (API / INSERT)' : `${what} p95 (endpoint / SQL)`,
        api: what === 'ingest' ? api.rowsPerS! : `${api.p50} / ${api.p95} ms`,
        sql: what === 'ingest' ? sql.rowsPerS! : `${sql.p50} / ${sql.p95} ms`,
        ratio: `${m} ${ok ? 'ok' : 'MISSED'}`,
        'per round': per.join(' '),
        'API RSS peak MiB': Math.max(...a.runs.map((r) => r.rssPeakMiB)),
      });
    }
  }
  console.log('');
  table(rows);
  // One entry per database, so BENCH_DB=pg and BENCH_DB=pglite runs land in the same file.
  const name = process.env.BENCH_RESULT_NAME ?? 'prices';
  const file = path.join(ROOT, 'bench/results', `${name}.json`);
  const byDb: Record<string, unknown> = fs.existsSync(file)
    ? ((JSON.parse(fs.readFileSync(file, 'utf8')) as { databases?: Record<string, unknown> }).databases ?? {})
    : {};
  for (const kind of DATABASES) {
    byDb[kind] = {
      machine: { ...machine(), load1AtEnd: r2(os.loadavg()[0]!) },
      settings: SETTINGS,
      seed: seeds[kind],
      server: servers[kind],
      ratios: Object.fromEntries(Object.entries(ratios).filter(([k]) => k.endsWith(`-${kind}`))),
      targets: results.filter((r) => r.db === kind),
    };
  }
  writeResult(name, { databases: byDb });
} finally {
  for (const s of stoppers.reverse()) await s().catch(() => undefined);
  cleanup(dir);
}
