/**
 * `npm run bench:exports`: do long CSV exports starve short requests? Per database: seeds an
 * account with BENCH_EXPORT_PRODUCTS (3000) products, starts the real server, and measures short
 * GETs (GET /api/v1/products/{id}, open loop, one every 10 ms) alone, then beside
 * BENCH_EXPORT_CONNECTIONS (2) connections downloading /api/v1/products.csv in a loop. The
 * export's pages go through the database's bulk lane (src/db/types.ts `bulkQuery`).
 * Writes bench/results/exports.json.
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
import { probe } from './lib/probe.js';
import { startServer, track } from './lib/proc.js';
import { pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const PRODUCTS = env('BENCH_EXPORT_PRODUCTS', 3_000);
const CONNECTIONS = env('BENCH_EXPORT_CONNECTIONS', 2);
const LABEL = { pg: 'PostgreSQL+Redis', pglite: 'PGlite' } as const;

const dir = workDir('exports');
const out: Record<string, unknown> = {};
const rows: Record<string, string | number>[] = [];
try {
  console.log(
    `bench:exports  ${PRODUCTS} products, ${CONNECTIONS} export connection(s), short GET every 10 ms, ${SETTINGS.durationS} s per phase`,
  );
  for (const db of DATABASES) {
    const dataDir = path.join(dir, `data-${db}`);
    if (db === 'pg') await recreatePgDatabase();
    const seeded = await seed(db === 'pg' ? { databaseUrl: pgUrl() } : { dataDir }, {
      keys: 1,
      products: PRODUCTS,
      heavyProducts: 0,
    });
    const server = track(
      await startServer({
        name: `exports-${db}`,
        args: realServerArgs(),
        env:
          db === 'pg'
            ? { DATABASE_URL: pgUrl(), REDIS_URL, REDIS_PREFIX: `pricehound-bench-${Date.now()}:` }
            : { DATA_DIR: dataDir },
        logFile: path.join(dir, `exports-${db}.log`),
      }),
    );
    try {
      const headers = { authorization: `Bearer ${seeded.keys[0]}` };
      const short = {
        url: server.url,
        paths: seeded.productIds.slice(0, 100).map((id) => `/api/v1/products/${id}`),
        headers,
        everyMs: 10,
        durationS: SETTINGS.durationS,
      };
      const alone = await probe(short);
      const [beside, exportLoop] = await Promise.all([
        probe(short),
        runLoad({
          url: server.url,
          connections: CONNECTIONS,
          durationS: SETTINGS.durationS,
          plan: () => ({ headers, paths: ['/api/v1/products.csv'] }),
        }),
      ]);
      const bad = problems(exportLoop);
      if (bad) throw new Error(`export loop: ${bad}`);
      out[LABEL[db]] = { alone, beside, exportLoop };
      for (const [phase, p] of [
        ['short GETs alone', alone],
        [`short GETs + exports (${exportLoop.rps} exports/s)`, beside],
      ] as const) {
        rows.push({ database: LABEL[db], phase, 'p50 ms': p.p50, 'p99 ms': p.p99, 'max ms': p.max });
      }
    } finally {
      await server.stop();
    }
  }
  table(rows);
  writeResult(process.env.BENCH_RESULT_NAME ?? 'exports', {
    machine: machine(),
    products: PRODUCTS,
    connections: CONNECTIONS,
    durationS: SETTINGS.durationS,
    results: out,
  });
} finally {
  cleanup(dir);
}
