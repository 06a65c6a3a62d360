/**
 * `npm run bench:startup`: time from spawning `node dist/cli/main.js start` to its first 200 from
 * GET /readyz (polled every 5 ms), and the idle RSS a second later:
 *   PGlite, new DATA_DIR       an empty directory: PGlite initialises it, migrations run
 *   PGlite, existing DATA_DIR  a directory already migrated and holding BENCH_HEAVY_PRODUCTS products
 *   PostgreSQL, new database   an empty database: migrations run
 *   PostgreSQL, existing       the migrated database
 * BENCH_STARTS (5) starts each; reports median, min and max. Writes bench/results/startup.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cleanup, DATABASES, env, machine, realServerArgs, sleep, table, workDir, writeResult } from './lib/common.js';
import { rssMiB, startServer, track } from './lib/proc.js';
import { median } from './lib/rounds.js';
import { pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const STARTS = Math.max(1, Math.floor(env('BENCH_STARTS', 5)));
const HEAVY_PRODUCTS = env('BENCH_HEAVY_PRODUCTS', 50_000);

const dir = workDir('startup');
const rows: Record<string, string | number>[] = [];
const results: Record<string, { readyMs: number[]; rssIdleMiB: number[] }> = {};

async function measure(label: string, prepare: (i: number) => Promise<Record<string, string>>) {
  const readyMs: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const envVars = await prepare(i);
    const s = track(
      await startServer({ name: label, args: realServerArgs(), env: envVars, logFile: path.join(dir, 'startup.log') }),
    );
    readyMs.push(Math.round(s.readyMs));
    await sleep(1_000);
    rss.push(rssMiB(s.pid));
    await s.stop();
  }
  results[label] = { readyMs, rssIdleMiB: rss };
  rows.push({
    case: label,
    'ready ms (median)': median(readyMs),
    min: Math.min(...readyMs),
    max: Math.max(...readyMs),
    'idle RSS MiB (median)': median(rss),
  });
  console.log(`  ${label}: ${readyMs.join(', ')} ms`);
}

try {
  console.log(`bench:startup  ${STARTS} starts per case`);
  for (const db of DATABASES) {
    if (db === 'pglite') {
      await measure('PGlite, new DATA_DIR', async (i) => ({ DATA_DIR: path.join(dir, `new-${i}`) }));
      const existing = path.join(dir, 'existing');
      process.stdout.write(`  seeding a DATA_DIR with ${HEAVY_PRODUCTS} products ... `);
      await seed({ dataDir: existing }, { keys: 1, products: 0, heavyProducts: HEAVY_PRODUCTS });
      console.log('done');
      await measure(`PGlite, existing DATA_DIR (${HEAVY_PRODUCTS} products)`, async () => ({ DATA_DIR: existing }));
      for (let i = 0; i < STARTS; i++) fs.rmSync(path.join(dir, `new-${i}`), { recursive: true, force: true });
    } else {
      const pgEnv = { DATABASE_URL: pgUrl(), REDIS_URL, REDIS_PREFIX: `pricehound-bench-${Date.now()}:` };
      await measure('PostgreSQL+Redis, new database', async () => {
        await recreatePgDatabase();
        return pgEnv;
      });
      process.stdout.write(`  seeding the database with ${HEAVY_PRODUCTS} products ... `);
      await recreatePgDatabase();
      await seed({ databaseUrl: pgUrl() }, { keys: 1, products: 0, heavyProducts: HEAVY_PRODUCTS });
      console.log('done');
      await measure(`PostgreSQL+Redis, existing database (${HEAVY_PRODUCTS} products)`, async () => pgEnv);
    }
  }
  console.log('');
  table(rows);
  writeResult(process.env.BENCH_RESULT_NAME ?? 'startup', {
    machine: machine(),
    settings: { starts: STARTS, heavyProducts: HEAVY_PRODUCTS },
    results,
  });
} finally {
  cleanup(dir);
}
