/**
 * `npm run bench:stall`: does a heavy list query stall other requests? The embedded engine
 * (PGlite) runs queries on the server's main thread, so while one runs nothing else can.
 *
 * Per database: seeds an account with BENCH_HEAVY_PRODUCTS (50000) products, starts the real
 * server, and measures
 *   1. the heavy query alone: GET /api/v1/products?q=needle&limit=100 (the word is in 1 product
 *      of 1000, so the scan cannot stop early), sequentially;
 *   2. light GETs alone: GET /api/v1/products/{id}, open loop, one every 10 ms;
 *   3. the same light GETs while BENCH_HEAVY_CONNECTIONS (1) connections run the heavy query in a
 *      loop;
 * reporting the light GETs' latency and the server's event-loop delay over each phase (from its
 * own /metrics: prom-client's pricehound_nodejs_eventloop_lag_* histogram, which is reset at each
 * scrape and samples every 10 ms, so an idle loop reads about 10 ms).
 * Writes bench/results/stall.json.
 */
import path from 'node:path';
import {
  cleanup,
  DATABASES,
  env,
  machine,
  realServerArgs,
  SETTINGS,
  table,
  workDir,
  writeResult,
} from './lib/common.js';
import { problems, runLoad } from './lib/load.js';
import { probe, type ProbeResult } from './lib/probe.js';
import { startServer, track } from './lib/proc.js';
import { NEEDLE, pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const HEAVY_PRODUCTS = env('BENCH_HEAVY_PRODUCTS', 50_000);
const HEAVY_CONNECTIONS = env('BENCH_HEAVY_CONNECTIONS', 1);
const PROBE_EVERY_MS = 10;
const LABEL = { pg: 'PostgreSQL+Redis', pglite: 'PGlite' } as const;
const HEAVY_PATH = `/api/v1/products?q=${NEEDLE}&limit=100`;

interface Eld {
  mean: number;
  p50: number;
  p99: number;
  max: number;
}

/** Scrapes the server's event-loop delay (ms) since the previous scrape. */
async function eventLoopDelay(url: string): Promise<Eld> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const get = (name: string) => {
    const m = new RegExp(`^pricehound_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`/metrics has no pricehound_nodejs_eventloop_lag_${name}_seconds`);
    return Math.round(Number(m[1]) * 1e5) / 100;
  };
  return { mean: get('mean'), p50: get('p50'), p99: get('p99'), max: get('max') };
}

const dir = workDir('stall');
const out: Record<string, unknown> = {};
const rows: Record<string, string | number>[] = [];

try {
  console.log(
    `bench:stall  ${HEAVY_PRODUCTS} products, ${HEAVY_CONNECTIONS} heavy connection(s), light GET every ${PROBE_EVERY_MS} ms, ${SETTINGS.durationS} s per phase`,
  );
  for (const db of DATABASES) {
    const dataDir = path.join(dir, `data-${db}`);
    if (db === 'pg') await recreatePgDatabase();
    process.stdout.write(`seeding ${LABEL[db]} (${HEAVY_PRODUCTS} products) ... `);
    const seeded = await seed(db === 'pg' ? { databaseUrl: pgUrl() } : { dataDir }, {
      keys: 2,
      products: 1_000,
      heavyProducts: HEAVY_PRODUCTS,
    });
    console.log('done');
    const server = track(
      await startServer({
        name: `stall-${db}`,
        args: realServerArgs(`stall-${db}`),
        env:
          db === 'pg'
            ? { DATABASE_URL: pgUrl(), REDIS_URL, REDIS_PREFIX: `pricehound-bench-${Date.now()}:` }
            : { DATA_DIR: dataDir },
        logFile: path.join(dir, `stall-${db}.log`),
      }),
    );
    try {
      const light = {
        url: server.url,
        paths: seeded.productIds.slice(0, 100).map((id) => `/api/v1/products/${id}`),
        headers: { authorization: `Bearer ${seeded.keys[0]}` },
        everyMs: PROBE_EVERY_MS,
        durationS: SETTINGS.durationS,
      };
      const heavyHeaders = { authorization: `Bearer ${seeded.heavyKey}` };

      // 1. the heavy query on its own (after a few warm-up calls)
      const heavyAlone: number[] = [];
      for (let i = 0; i < 23; i++) {
        const t0 = performance.now();
        const r = await fetch(server.url + HEAVY_PATH, { headers: heavyHeaders });
        const body = (await r.json()) as { data?: unknown[] };
        if (r.status !== 200) throw new Error(`heavy query: ${r.status} ${JSON.stringify(body)}`);
        if (i >= 3) heavyAlone.push(performance.now() - t0);
        if (i === 0) console.log(`heavy query returns ${body.data?.length} products`);
      }
      heavyAlone.sort((a, b) => a - b);
      const heavyMs = { p50: Math.round(heavyAlone[10]! * 100) / 100, max: Math.round(heavyAlone[19]! * 100) / 100 };

      // 2. light GETs alone
      await eventLoopDelay(server.url);
      const lightAlone = await probe(light);
      const eldAlone = await eventLoopDelay(server.url);

      // 3. light GETs next to the heavy query in a loop
      await eventLoopDelay(server.url);
      const [lightWithHeavy, heavyLoop] = await Promise.all([
        probe(light),
        runLoad({
          url: server.url,
          connections: HEAVY_CONNECTIONS,
          durationS: SETTINGS.durationS,
          plan: () => ({ headers: heavyHeaders, paths: [HEAVY_PATH] }),
        }),
      ]);
      const eldWithHeavy = await eventLoopDelay(server.url);
      const bad = problems(heavyLoop);
      if (bad) throw new Error(`heavy loop: ${bad}`);
      const check = (p: ProbeResult) => {
        if (Object.keys(p.statuses).some((s) => s !== '200'))
          throw new Error(`light GETs: ${JSON.stringify(p.statuses)}`);
      };
      check(lightAlone);
      check(lightWithHeavy);

      out[LABEL[db]] = { heavyQueryAloneMs: heavyMs, lightAlone, eldAlone, lightWithHeavy, eldWithHeavy, heavyLoop };
      for (const [phase, p, e] of [
        ['light GETs alone', lightAlone, eldAlone],
        [`light GETs + heavy loop (${heavyLoop.rps} heavy/s)`, lightWithHeavy, eldWithHeavy],
      ] as const) {
        rows.push({
          database: LABEL[db],
          phase,
          'light p50 ms': p.p50,
          'light p99 ms': p.p99,
          'light max ms': p.max,
          'ELD mean ms': e.mean,
          'ELD p99 ms': e.p99,
          'ELD max ms': e.max,
          'heavy query alone p50 ms': heavyMs.p50,
        });
      }
    } finally {
      await server.stop();
    }
  }
  console.log('');
  table(rows);
  console.log('(ELD: event-loop delay per 10 ms sample, sampling interval included: an idle loop reads ~10 ms)');
  writeResult(process.env.BENCH_RESULT_NAME ?? 'stall', {
    machine: machine(),
    settings: {
      durationS: SETTINGS.durationS,
      heavyProducts: HEAVY_PRODUCTS,
      heavyConnections: HEAVY_CONNECTIONS,
      probeEveryMs: PROBE_EVERY_MS,
      heavyPath: HEAVY_PATH,
    },
    results: out,
  });
} finally {
  cleanup(dir);
}
