/**
 * `npm run bench:api`: authenticated GET /api/v1/products/{id} on the real server (rate
 * limiting on) against the same SELECT in a minimal Fastify route (the database's floor) and a
 * bare Fastify JSON route (the HTTP ceiling). Same load generator (wrk when installed, else
 * autocannon in this process; BENCH_LOADGEN), same connections and duration, each server in its
 * own child process; on PostgreSQL + Redis and on embedded PGlite. Prints req/s, latency, CPU per
 * request and the ratios; writes bench/results/api.json.
 *
 * All servers are started first and the load then visits them in turn, for several rounds (the
 * order reversed every other round), so each ratio compares measurements taken seconds apart:
 * on a shared machine that matters more than the length of one measurement.
 *
 * Two phases, one after the other on the same servers:
 * 1. At saturation: every connection sends its next request as soon as the answer arrives, so
 *    each target runs as fast as it can; req/s, the ratios and CPU per request come from here.
 *    By Little's law the mean latency there is connections / throughput (50 / 5 000 req/s = 10 ms),
 *    so its latency follows throughput and says little about a latency target.
 * 2. At a set load (wrk only; BENCH_SET_LOAD=0 skips it): the same rounds, connections and wrk,
 *    but each connection waits a think time between an answer and its next request, chosen so the
 *    offered load is half of the minimal route's (b's) median req/s at saturation in this run, for
 *    that database: think ms = connections / (b req/s / 2) * 1000 (c gets the PostgreSQL pair's,
 *    or PGlite's if only PGlite ran). The achieved rate is a little below (each cycle is think
 *    time + latency). The p99 < 10 ms target (PostgreSQL) is judged on this phase; the saturated
 *    p99 is still printed and written.
 *
 * Env: BENCH_DB=pg|pglite|pg,pglite  BENCH_DURATION=3  BENCH_WARMUP=3  BENCH_ROUNDS=10
 *      BENCH_CONNECTIONS=50  BENCH_SET_LOAD=0 (skip phase 2)  BENCH_LOADGEN=wrk|autocannon
 *      BENCH_NICE=-10  BENCH_PROFILE=1 (CPU profile of the real servers into
 *      bench/results/profiles/)  BENCH_LOG_LEVEL (the real server's LOG_LEVEL; default info)
 */
import fs from 'node:fs';
import path from 'node:path';
import { PLANS } from '../src/auth/plans.js';
import {
  cleanup,
  DATABASES,
  env,
  machine,
  minimalServerArgs,
  realServerArgs,
  SETTINGS,
  table,
  workDir,
  writeResult,
} from './lib/common.js';
import { startServer } from './lib/proc.js';
import { LOADGEN, NICE, plans, r2, Rounds, ROUNDS, SLICE_S } from './lib/rounds.js';
import { PG_BENCH_DB, pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const KEYS = SETTINGS.connections; // one key per connection, so no key nears its hourly limit
const PRODUCTS = 1_000;
const LABEL = { pg: 'PostgreSQL+Redis', pglite: 'PGlite' } as const;
/** The p99 target (ms), PostgreSQL only, judged at the set load. */
const P99_TARGET_MS = 10;
const SET_LOAD = env('BENCH_SET_LOAD', 1) !== 0;

const dir = workDir('api');
const logs = (name: string) => path.join(dir, `${name}.log`);
const rounds = new Rounds();
const runId = Date.now();

try {
  console.log(
    `bench:api  ${SETTINGS.connections} connections, ${ROUNDS} rounds of ${SLICE_S} s per target ` +
      `(after a ${SETTINGS.warmupS} s warm-up each); work dir ${dir}`,
  );
  rounds.add(
    'c',
    'c: bare Fastify',
    await startServer({ name: 'bare', args: minimalServerArgs('bare'), env: { MODE: 'bare' }, logFile: logs('bare') }),
    plans(undefined),
  );

  for (const db of DATABASES) {
    const dataDir = path.join(dir, 'data');
    if (db === 'pg') await recreatePgDatabase();
    process.stdout.write(`seeding ${LABEL[db]} ... `);
    const seeded = await seed(db === 'pg' ? { databaseUrl: pgUrl() } : { dataDir }, {
      keys: KEYS,
      products: PRODUCTS,
      heavyProducts: 0,
    });
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
      await startServer({
        name: `minimal-${db}`,
        args: minimalServerArgs(`minimal-${db}`),
        env: { ...minimalEnv, MODE: db, ACCOUNT_ID: seeded.accountId },
        logFile: logs(`minimal-${db}`),
      }),
      plans(seeded),
      pgDb,
    );
  }

  await rounds.measure();
  const summary = rounds.summary();
  rounds.printSummary((t) => t.id.startsWith('a-'), 'medians over the rounds, at saturation');

  // Phase 2: latency at a set load, half of b's saturated req/s per database.
  type Pace = { b_saturated_rps: number; target_rps: number; think_ms: number };
  const pace: Partial<Record<'pg' | 'pglite', Pace>> = {};
  let setLoadSkipped: string | undefined;
  if (!SET_LOAD) setLoadSkipped = 'BENCH_SET_LOAD=0';
  else if (LOADGEN !== 'wrk')
    setLoadSkipped = `needs wrk (think time per connection); the load generator is ${LOADGEN}`;
  if (setLoadSkipped) {
    console.log(`\nlatency at a set load: skipped (${setLoadSkipped})`);
  } else {
    for (const db of DATABASES) {
      const b = summary.find((s) => s.id === `b-${db}`)!;
      const target = Math.round(b.rps / 2);
      pace[db] = { b_saturated_rps: b.rps, target_rps: target, think_ms: r2((SETTINGS.connections / target) * 1000) };
    }
    const cPace = (pace.pg ?? pace.pglite)!;
    const paceOf = new Map<string, Pace>([['c', cPace]]);
    for (const db of DATABASES) for (const x of ['a', 'b']) paceOf.set(`${x}-${db}`, pace[db]!);
    console.log(
      `\nlatency at a set load: ${SETTINGS.connections} connections, think time per connection for half of b's ` +
        `saturated req/s (${DATABASES.map((db) => `${LABEL[db]} ${pace[db]!.target_rps} req/s = ${pace[db]!.think_ms} ms`).join(', ')}; ` +
        `c as ${pace.pg ? LABEL.pg : LABEL.pglite}), ${ROUNDS} rounds of ${SLICE_S} s per target`,
    );
    await rounds.measureAtSetLoad((t) => {
      const p = paceOf.get(t.id);
      return p && { thinkMs: p.think_ms, targetRps: p.target_rps };
    });
    rounds.printSetLoadSummary();
  }
  const setLoadSummary = rounds.setLoadSummary();

  const ratios: Record<
    string,
    { a_b: number; a_b_rounds: number[]; a_c: number; a_c_rounds: number[]; p99_ms: number }
  > = {};
  const p99AtSetLoad: Record<string, number | undefined> = {};
  for (const db of DATABASES) {
    const ab = rounds.ratio(`a-${db}`, `b-${db}`);
    const ac = rounds.ratio(`a-${db}`, 'c');
    const a = summary.find((s) => s.id === `a-${db}`)!;
    const aSet = setLoadSummary.find((s) => s.id === `a-${db}`);
    ratios[LABEL[db]] = { a_b: ab.median, a_b_rounds: ab.rounds, a_c: ac.median, a_c_rounds: ac.rounds, p99_ms: a.p99 };
    p99AtSetLoad[LABEL[db]] = aSet?.p99;
    // Every request counted against its connection's key: none may come near the hourly limit.
    const perKey = Math.ceil((a.requests + a.rps * SETTINGS.warmupS + (aSet?.requests ?? 0)) / KEYS);
    if (perKey > PLANS.business * 0.9)
      console.warn(`WARNING: about ${perKey} requests per key on ${db}, near the ${PLANS.business}/h limit`);
  }

  console.log('');
  table(
    Object.entries(ratios).map(([db, r]) => {
      const setP99 = p99AtSetLoad[db];
      const verdict =
        db === LABEL.pg && setP99 !== undefined
          ? setP99 < P99_TARGET_MS
            ? ` ok (< ${P99_TARGET_MS})`
            : ` MISSED (< ${P99_TARGET_MS})`
          : '';
      return {
        database: db,
        'a/b (target >= 0.7)': `${r.a_b} ${r.a_b >= 0.7 ? 'ok' : 'MISSED'}`,
        'a/b per round': r.a_b_rounds.join(' '),
        'a/c': r.a_c,
        'a p99 ms at saturation': r.p99_ms,
        [`a p99 ms at set load (target < ${P99_TARGET_MS}, PostgreSQL)`]:
          setP99 === undefined ? 'not measured' : `${setP99}${verdict}`,
      };
    }),
  );
  const pgSet = setLoadSummary.find((s) => s.id === 'a-pg');
  writeResult(process.env.BENCH_RESULT_NAME ?? 'api', {
    machine: machine(),
    settings: {
      ...SETTINGS,
      durationS: SLICE_S,
      rounds: ROUNDS,
      nice: NICE ?? 0,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
      setLoad: SET_LOAD,
    },
    summary,
    ratios,
    at_set_load: setLoadSkipped
      ? { skipped: setLoadSkipped }
      : {
          method:
            `wrk, ${SETTINGS.connections} connections, each waiting think_ms between an answer and its next request; ` +
            "think_ms = connections / target_rps * 1000, target_rps = half of b's median saturated req/s for that database " +
            `(c: ${pace.pg ? LABEL.pg : LABEL.pglite}'s); medians over ${ROUNDS} interleaved rounds of ${SLICE_S} s`,
          pace: Object.fromEntries(DATABASES.map((db) => [LABEL[db], pace[db]])),
          summary: setLoadSummary,
          p99_target:
            pgSet === undefined
              ? { database: LABEL.pg, limit_ms: P99_TARGET_MS, measured: false }
              : { database: LABEL.pg, limit_ms: P99_TARGET_MS, p99_ms: pgSet.p99, met: pgSet.p99 < P99_TARGET_MS },
        },
  });
} finally {
  await rounds.stopAll();
  cleanup(dir);
}
