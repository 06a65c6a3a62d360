/**
 * `npm run bench:attribution`: a diagnostic, not a headline figure. Where does the real server's
 * cost over the minimal route go? Runs the real server in variants that each leave out one
 * per-request cost the configuration controls, next to the minimal route, in interleaved rounds
 * (same load as bench:api), and prints req/s and CPU per request of each:
 *   shipped       LOG_LEVEL=info, rate-limit counters in Redis (PostgreSQL) - what bench:api runs
 *   log warn      LOG_LEVEL=warn: no request log line
 *   memory limit  no REDIS_URL: counters in process memory (still limiting)
 *   both          the two together
 *   baseline      BENCH_BASELINE=/path/to/dist/cli/main.js of another build (e.g. before a
 *                 change), shipped settings: before/after in the same interleaved run
 * Env as bench:api (BENCH_DB, BENCH_DURATION, BENCH_ROUNDS, BENCH_NICE ...), and
 * BENCH_VARIANTS=shipped,baseline to run only some variants.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  cleanup,
  DATABASES,
  machine,
  minimalServerArgs,
  REAL_SERVER,
  realServerArgs,
  SETTINGS,
  workDir,
  writeResult,
} from './lib/common.js';
import { startServer } from './lib/proc.js';
import { NICE, plans, Rounds, ROUNDS, SLICE_S } from './lib/rounds.js';
import { PG_BENCH_DB, pgUrl, recreatePgDatabase, REDIS_URL, seed } from './lib/seed.js';

const dir = workDir('attribution');
const logs = (name: string) => path.join(dir, `${name}.log`);
const rounds = new Rounds();
const runId = Date.now();

try {
  console.log(
    `bench:attribution  ${SETTINGS.connections} connections, ${ROUNDS} rounds of ${SLICE_S} s per target; work dir ${dir}`,
  );
  for (const db of DATABASES) {
    const dataDir = path.join(dir, `data-${db}`);
    if (db === 'pg') await recreatePgDatabase();
    const seeded = await seed(db === 'pg' ? { databaseUrl: pgUrl() } : { dataDir }, {
      keys: SETTINGS.connections,
      products: 1_000,
      heavyProducts: 0,
    });
    const pgDb = db === 'pg' ? PG_BENCH_DB : undefined;
    const shipped: Record<string, string> = db === 'pg' ? { LOG_LEVEL: 'info', REDIS_URL } : { LOG_LEVEL: 'info' };
    const only = process.env.BENCH_VARIANTS?.split(',');
    const variants: [string, Record<string, string>, string][] = (
      [
        ['shipped', shipped, REAL_SERVER],
        ['log warn', { ...shipped, LOG_LEVEL: 'warn' }, REAL_SERVER],
        ...(db === 'pg'
          ? ([
              ['memory limit', { LOG_LEVEL: 'info' }, REAL_SERVER],
              ['both', { LOG_LEVEL: 'warn' }, REAL_SERVER],
            ] as const)
          : []),
        ...(process.env.BENCH_BASELINE
          ? ([['baseline', shipped, path.resolve(process.env.BENCH_BASELINE)]] as const)
          : []),
      ] as [string, Record<string, string>, string][]
    ).filter(([name]) => !only || only.includes(name));
    for (const [i, [name, vEnv, server]] of variants.entries()) {
      let dbEnv: Record<string, string>;
      if (db === 'pg') {
        dbEnv = { DATABASE_URL: pgUrl(), REDIS_PREFIX: `pricehound-bench-${runId}-${i}:` };
      } else {
        const copy = `${dataDir}-${i}`;
        fs.cpSync(dataDir, copy, { recursive: true });
        dbEnv = { DATA_DIR: copy };
      }
      const id = `${db}-${name.replace(/ /g, '-')}`;
      rounds.add(
        id,
        `${db} ${name}`,
        await startServer({
          name: id,
          args: realServerArgs(id, server),
          env: { ...dbEnv, ...vEnv },
          logFile: logs(id),
        }),
        plans(seeded),
        pgDb,
      );
    }
    rounds.add(
      `${db}-minimal`,
      `${db} minimal route`,
      await startServer({
        name: `${db}-minimal`,
        args: minimalServerArgs(`${db}-minimal`),
        env:
          db === 'pg'
            ? { MODE: 'pg', DATABASE_URL: pgUrl(), ACCOUNT_ID: seeded.accountId }
            : { MODE: 'pglite', DATA_DIR: dataDir, ACCOUNT_ID: seeded.accountId },
        logFile: logs(`${db}-minimal`),
      }),
      plans(seeded),
      pgDb,
    );
  }
  await rounds.measure();
  rounds.printSummary(() => false);
  const ratios: Record<string, number[]> = {};
  // Server CPU per request over the minimal route's (issue 26's target: at most 1.5), and of the
  // build under test over the baseline's, per round.
  const cpuRatios: Record<string, { median: number; rounds: number[] }> = {};
  for (const t of rounds.targets) {
    const db = t.id.split('-')[0]!;
    if (t.id.endsWith('minimal')) continue;
    ratios[`${t.label} / minimal`] = rounds.ratio(t.id, `${db}-minimal`).rounds;
    cpuRatios[`${t.label} / minimal`] = rounds.cpuRatio(t.id, `${db}-minimal`);
    if (t.id === `${db}-shipped` && rounds.targets.some((o) => o.id === `${db}-baseline`)) {
      cpuRatios[`${db} shipped / baseline`] = rounds.cpuRatio(t.id, `${db}-baseline`);
    }
  }
  console.log('\nratio to the minimal route, per round');
  for (const [k, v] of Object.entries(ratios)) console.log(`  ${k.padEnd(34)} ${v.join(' ')}`);
  console.log('\nserver CPU per request, ratio per round (median first)');
  for (const [k, v] of Object.entries(cpuRatios)) console.log(`  ${k.padEnd(34)} ${v.median}: ${v.rounds.join(' ')}`);
  writeResult(process.env.BENCH_RESULT_NAME ?? 'attribution', {
    machine: machine(),
    settings: { ...SETTINGS, durationS: SLICE_S, rounds: ROUNDS, nice: NICE ?? 0 },
    summary: rounds.summary(),
    ratios,
    cpuRatios,
  });
} finally {
  await rounds.stopAll();
  cleanup(dir);
}
