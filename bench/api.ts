/**
 * `npm run bench:api`: authenticated GET /api/v1/products/{id} on the real server (rate
 * limiting on) against the same SELECT in a minimal Fastify route (the database's floor) and a
 * bare Fastify JSON route (the HTTP ceiling). Same load generator (autocannon, in this process),
 * same connections and duration, each server in its own child process; on PostgreSQL + Redis and
 * on embedded PGlite. Prints req/s, latency, CPU per request and the ratios; writes
 * bench/results/api.json.
 *
 * All servers are started first and the load then visits them in turn, for several rounds (the
 * order reversed every other round), so each ratio compares measurements taken seconds apart:
 * on a shared machine that matters more than the length of one measurement.
 *
 * Env: BENCH_DB=pg|pglite|pg,pglite  BENCH_DURATION=10  BENCH_WARMUP=3  BENCH_ROUNDS=3
 *      BENCH_CONNECTIONS=50  BENCH_NICE=-10  BENCH_PROFILE=1 (CPU profile of the real servers
 *      into bench/results/profiles/)  BENCH_LOG_LEVEL (the real server's LOG_LEVEL; default info)
 */
import fs from 'node:fs';
import path from 'node:path';
import { PLANS } from '../src/auth/keys.js';
import { cleanup, DATABASES, machine, minimalServerArgs, realServerArgs, SETTINGS, table, workDir, writeResult } from './lib/common.js';
import { startServer } from './lib/proc.js';
import { NICE, plans, Rounds, ROUNDS } from './lib/rounds.js';
import { PG_BENCH_DB, pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const KEYS = SETTINGS.connections; // one key per connection, so no key nears its hourly limit
const PRODUCTS = 1_000;
const LABEL = { pg: 'PostgreSQL+Redis', pglite: 'PGlite' } as const;

const dir = workDir('api');
const logs = (name: string) => path.join(dir, `${name}.log`);
const rounds = new Rounds();
const runId = Date.now();

try {
  console.log(
    `bench:api  ${SETTINGS.connections} connections, ${ROUNDS} rounds of ${SETTINGS.durationS} s per target ` +
      `(after a ${SETTINGS.warmupS} s warm-up each); work dir ${dir}`,
  );
  rounds.add('c', 'c: bare Fastify', await startServer({ name: 'bare', args: minimalServerArgs('bare'), env: { MODE: 'bare' }, logFile: logs('bare') }), plans(undefined));

  for (const db of DATABASES) {
    const dataDir = path.join(dir, 'data');
    if (db === 'pg') await recreatePgDatabase();
    process.stdout.write(`seeding ${LABEL[db]} ... `);
    const seeded = await seed(db === 'pg' ? { databaseUrl: pgUrl() } : { dataDir }, { keys: KEYS, products: PRODUCTS, heavyProducts: 0 });
    console.log('done');
    let realEnv: Record<string, string>;
    let minimalEnv: Record<string, string>;
    if (db === 'pg') {
      realEnv = { DATABASE_URL: pgUrl(), REDIS_URL, REDIS_PREFIX: `pricehound-bench-${runId}:` };
      minimalEnv = { DATABASE_URL: pgUrl() };
    } else {
      // PGlite is single-process: the minimal server reads a copy of the same data directory.
      const copy = path.join(dir, 'data-copy');
      fs.cpSync(dataDir, copy, { recursive: true });
      realEnv = { DATA_DIR: dataDir };
      minimalEnv = { DATA_DIR: copy };
    }
    const pgDb = db === 'pg' ? PG_BENCH_DB : undefined;
    rounds.add(
      `a-${db}`,
      `a: pricehound ${LABEL[db]}`,
      await startServer({
        name: `api-${db}`,
        args: realServerArgs(`api-${db}`),
        env: { ...realEnv, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
        logFile: logs(`api-${db}`),
      }),
      plans(seeded),
      pgDb,
    );
    rounds.add(
      `b-${db}`,
      `b: minimal ${LABEL[db]}`,
      await startServer({ name: `minimal-${db}`, args: minimalServerArgs(`minimal-${db}`), env: { ...minimalEnv, MODE: db, ACCOUNT_ID: seeded.accountId }, logFile: logs(`minimal-${db}`) }),
      plans(seeded),
      pgDb,
    );
  }

  await rounds.measure();

  const ratios: Record<string, { a_b: number; a_b_rounds: number[]; a_c: number; a_c_rounds: number[]; p99_ms: number }> = {};
  const summary = rounds.summary();
  for (const db of DATABASES) {
    const ab = rounds.ratio(`a-${db}`, `b-${db}`);
    const ac = rounds.ratio(`a-${db}`, 'c');
    const a = summary.find((s) => s.id === `a-${db}`)!;
    ratios[LABEL[db]] = { a_b: ab.median, a_b_rounds: ab.rounds, a_c: ac.median, a_c_rounds: ac.rounds, p99_ms: a.p99 };
    // Every request counted against its connection's key: none may come near the hourly limit.
    const perKey = Math.ceil((a.requests + a.rps * SETTINGS.warmupS) / KEYS);
    if (perKey > PLANS.business * 0.9) console.warn(`WARNING: about ${perKey} requests per key on ${db}, near the ${PLANS.business}/h limit`);
  }

  rounds.printSummary((t) => t.id.startsWith('a-'));
  console.log('');
  table(
    Object.entries(ratios).map(([db, r]) => ({
      database: db,
      'a/b (target >= 0.7)': `${r.a_b} ${r.a_b >= 0.7 ? 'ok' : 'MISSED'}`,
      'a/b per round': r.a_b_rounds.join(' '),
      'a/c': r.a_c,
      'a p99 ms': `${r.p99_ms}${db === LABEL.pg ? (r.p99_ms < 10 ? ' ok (< 10)' : ' MISSED (< 10)') : ''}`,
    })),
  );
  writeResult(process.env.BENCH_RESULT_NAME ?? 'api', {
    machine: machine(),
    settings: { ...SETTINGS, rounds: ROUNDS, nice: NICE ?? 0, logLevel: process.env.BENCH_LOG_LEVEL ?? 'info' },
    summary,
    ratios,
  });
} finally {
  await rounds.stopAll();
  cleanup(dir);
}
