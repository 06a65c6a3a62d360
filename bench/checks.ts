// Checks per second of one worker process against the local fixture site, with ~150 KB pages,
// against a fetch+parse baseline of the same pages at the same concurrency, in one run.
//   npm run bench:checks      (builds first; BENCH_DB=pg|pglite|pg,pglite, see SETTINGS below)
//
// Processes: the fixture site (bench/checks-site.ts) in its own process; the worker as shipped
// (`node dist/cli/main.js worker` on PostgreSQL, `... start` on the embedded database, where the
// worker can only run inside the one process that owns DATA_DIR); each baseline in a process of
// its own (bench/checks-baseline.ts). The targets take turns, order reversed every other round.
//
// BENCH_COMPARE_SERVER=/path/to/other/dist/cli/main.js adds that build's worker to every round
// and reports, per round, this build's CPU and time per check over the other's (a change's cost
// measured side by side, e.g. against a build of the commit before it).
//
// The site is one host on 127.0.0.1, so the per-domain politeness limits are lifted for the run:
// FETCH_DOMAIN_DELAY_MS=0 (default 1000) and FETCH_DOMAIN_CONCURRENCY=100 (default 2). Without
// that a worker would make at most 1 request per second to the one host, by design.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createAccount } from '../src/auth/keys.js';
import { migrate } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open.js';
import { newId } from '../src/ids.js';
import { cleanup, DATABASES, env, machine, REAL_SERVER, table, workDir, writeResult } from './lib/common.js';
import { cpuMs, pidsMatching, ROOT, rssMiB } from './lib/proc.js';
import { pgUrl, recreatePgDatabase } from './lib/seed.js';
import { BENCH_PAGE, pageUrl } from './checks-pages.js';

const SETTINGS = {
  /** Checks per target per round. */
  checks: env('BENCH_CHECKS', 3000),
  rounds: env('BENCH_ROUNDS', 2),
  /** WORKER_CONCURRENCY of the worker, and the baseline's requests in flight. */
  concurrency: env('BENCH_CONCURRENCY', 16),
  /** Content-Encoding the site serves: gzip (default, what most shops send), br or identity. */
  encoding: process.env.BENCH_ENCODING ?? 'gzip',
  /** The first 5% of checks are warm-up (JIT, connections, robots.txt): rates and CPU exclude them. */
  warmFraction: 0.05,
};
const PG_DB = 'ph_bench_checks';
const BASELINES = (process.env.BENCH_BASELINES ?? 'undici,fetcher').split(',').filter(Boolean);
/** Worker variants: EXTRACT_THREADS values (default: the shipped default, 1 here, and 0: inline). */
const WORKER_THREADS = (process.env.BENCH_EXTRACT_THREADS ?? '1,0').split(',').filter(Boolean);
/**
 * Another build's server (its dist/cli/main.js, e.g. of the commit before a change) run as one
 * more worker target in the same rounds, with the first EXTRACT_THREADS value: the cost of a
 * check against that build's, measured side by side (BENCH_COMPARE_SERVER=/path/dist/cli/main.js).
 */
const COMPARE_SERVER = process.env.BENCH_COMPARE_SERVER ? path.resolve(process.env.BENCH_COMPARE_SERVER) : undefined;

const WORKER_ENV = {
  LOG_LEVEL: 'debug', // one `check finished` line per check: how the bench counts them
  ALLOW_LOOPBACK_TARGETS: 'true',
  FETCH_DOMAIN_DELAY_MS: '0',
  FETCH_DOMAIN_CONCURRENCY: '100',
  WORKER_CONCURRENCY: String(SETTINGS.concurrency),
  SHUTDOWN_TIMEOUT_MS: '2000',
  PORT: '0',
  HOST: '127.0.0.1',
};

const live = new Set<ChildProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const p of live) p.kill('SIGKILL');
    process.exit(130);
  });
}

function spawnNode(args: string[], extraEnv: Record<string, string>): ChildProcess {
  const p = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(p);
  p.once('exit', () => live.delete(p));
  return p;
}

const exited = (p: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    p.exitCode !== null ? resolve(p.exitCode) : p.once('exit', (c) => resolve(c)),
  );

interface Site {
  url: string;
  pid: number;
  proc: ChildProcess;
}

async function startSite(): Promise<Site> {
  const proc = spawnNode(['--import', 'tsx', path.join(ROOT, 'bench/checks-site.ts'), SETTINGS.encoding], {});
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', () => reject(new Error('fixture site exited')));
  });
  const { url } = JSON.parse(line) as { url: string };
  return { url, pid: proc.pid!, proc };
}

interface Target {
  kind: 'pg' | 'pglite';
  env: Record<string, string>;
  command: 'worker' | 'start';
  accountId: string;
  productId: string;
  dir?: string;
}

async function prepare(kind: 'pg' | 'pglite'): Promise<Target> {
  let envFor: Record<string, string>;
  let dir: string | undefined;
  if (kind === 'pg') {
    await recreatePgDatabase(PG_DB);
    envFor = { DATABASE_URL: pgUrl(PG_DB) };
  } else {
    dir = workDir('checks');
    envFor = { DATA_DIR: dir, DATABASE_URL: '' };
  }
  const db = await openDatabase(
    kind === 'pg' ? { databaseUrl: pgUrl(PG_DB), dataDir: '' } : { databaseUrl: undefined, dataDir: dir! },
  );
  try {
    await migrate(db);
    const accountId = await createAccount(db, 'bench');
    const productId = newId('prod');
    await db.query(
      `insert into products (id, account_id, name, base_price, currency) values ($1, $2, 'Bench product', 100, 'USD')`,
      [productId, accountId],
    );
    return {
      kind,
      env: envFor,
      command: kind === 'pg' ? 'worker' : 'start',
      accountId,
      productId,
      ...(dir ? { dir } : {}),
    };
  } finally {
    await db.close();
  }
}

/** Replaces the listings with `n` due ones, each its own URL (tagged per round). */
async function seedListings(t: Target, site: Site, tag: string, n: number): Promise<void> {
  const db = await openDatabase(
    t.kind === 'pg' ? { databaseUrl: pgUrl(PG_DB), dataDir: '' } : { databaseUrl: undefined, dataDir: t.dir! },
  );
  try {
    await db.query('delete from listings');
    const ids = Array.from({ length: n }, () => newId('lst'));
    const urls = ids.map((_, i) => pageUrl(site.url, tag, i));
    await db.query(
      `insert into listings (id, account_id, product_id, url, check_interval_seconds, next_check_at)
       select u.id, $1, $2, u.url, 3600, now() - interval '1 second' from unnest($3::text[], $4::text[]) as u (id, url)`,
      [t.accountId, t.productId, ids, urls],
    );
  } finally {
    await db.close();
  }
}

const pgBackends = () => pidsMatching(new RegExp(`^postgres: \\S+: \\S+ ${PG_DB} `));
const cpuOf = (pids: number[]) => pids.reduce((s, p) => s + cpuMs(p), 0);

interface Measured {
  target: string;
  round: number;
  checks: number;
  failures: number;
  perSecond: number;
  /** CPU ms per check in the window: the measured process, the site, PostgreSQL backends. */
  cpuPerCheck: { process: number; site: number; postgres: number };
  rss: { atWarm: number; peak: number; atEnd: number; samples: { done: number; mib: number }[] };
}

const r2 = (n: number) => Math.round(n * 100) / 100;

async function runWorker(
  t: Target,
  site: Site,
  round: number,
  threads: string,
  server = REAL_SERVER,
): Promise<Measured> {
  const n = SETTINGS.checks;
  const warm = Math.max(1, Math.floor(n * SETTINGS.warmFraction));
  const other = server !== REAL_SERVER;
  await seedListings(t, site, `w${threads}${other ? 'o' : ''}r${round}`, n);
  const proc = spawnNode([server, t.command], { ...WORKER_ENV, ...t.env, EXTRACT_THREADS: threads });
  const pid = proc.pid!;
  let done = 0;
  let failures = 0;
  let tWarm = 0;
  let tEnd = 0;
  const cpu0 = { process: 0, site: 0, postgres: 0 };
  const cpu1 = { ...cpu0 };
  const rssSamples: { done: number; mib: number }[] = [];
  let rssAtWarm = 0;
  const sampler = setInterval(() => {
    try {
      rssSamples.push({ done, mib: rssMiB(pid) });
    } catch {
      // exited
    }
  }, 250);
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) =>
      reject(new Error(`worker exited (${code}) after ${done} checks: ${stderr.slice(-2000)}`)),
    );
    readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (!line.includes('"check finished"')) return;
      const l = JSON.parse(line) as { time: number; ok: boolean };
      done++;
      if (!l.ok) failures++;
      if (done === warm) {
        tWarm = l.time;
        Object.assign(cpu0, { process: cpuMs(pid), site: cpuMs(site.pid), postgres: cpuOf(pgBackends()) });
        rssAtWarm = rssMiB(pid);
      }
      if (done === n) {
        tEnd = l.time;
        Object.assign(cpu1, { process: cpuMs(pid), site: cpuMs(site.pid), postgres: cpuOf(pgBackends()) });
        resolve();
      }
    });
  });
  const rssAtEnd = rssMiB(pid);
  clearInterval(sampler);
  proc.removeAllListeners('exit');
  proc.kill('SIGTERM');
  await exited(proc);
  const window = n - warm;
  return {
    target: `${other ? 'other build: ' : ''}worker (${t.command}, EXTRACT_THREADS=${threads})`,
    round,
    checks: n,
    failures,
    perSecond: r2((window / (tEnd - tWarm)) * 1000),
    cpuPerCheck: {
      process: r2((cpu1.process - cpu0.process) / window),
      site: r2((cpu1.site - cpu0.site) / window),
      postgres: r2((cpu1.postgres - cpu0.postgres) / window),
    },
    rss: { atWarm: rssAtWarm, peak: maxOf(rssSamples.map((s) => s.mib)), atEnd: rssAtEnd, samples: thin(rssSamples) },
  };
}

/** The largest number, ignoring NaN (a sample taken as the process exited). */
const maxOf = (xs: number[]) => Math.max(...xs.filter((x) => !Number.isNaN(x)));

/** At most 20 RSS samples, evenly spread, for the result file. */
function thin<T>(xs: T[]): T[] {
  if (xs.length <= 20) return xs;
  return Array.from({ length: 20 }, (_, i) => xs[Math.round((i * (xs.length - 1)) / 19)]!);
}

async function runBaseline(mode: string, site: Site, round: number): Promise<Measured> {
  const n = SETTINGS.checks;
  const warm = Math.max(1, Math.floor(n * SETTINGS.warmFraction));
  const proc = spawnNode(['--import', 'tsx', path.join(ROOT, 'bench/checks-baseline.ts')], {
    ...WORKER_ENV,
    BASELINE_MODE: mode,
    BASELINE_SITE: site.url,
    BASELINE_TAG: `${mode.slice(0, 1)}${round}`,
    BASELINE_N: String(n),
    BASELINE_CONCURRENCY: String(SETTINGS.concurrency),
    BASELINE_WARM: String(warm),
  });
  const pid = proc.pid!;
  const samples: { done: number; mib: number }[] = [];
  const sampler = setInterval(() => {
    try {
      samples.push({ done: -1, mib: rssMiB(pid) });
    } catch {
      // exited
    }
  }, 250);
  const site0 = cpuMs(site.pid);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await exited(proc);
  clearInterval(sampler);
  const site1 = cpuMs(site.pid);
  if (code !== 0) throw new Error(`baseline ${mode} exited ${code}`);
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
    done: number[];
    failures: number;
    cpuWindowMs: number;
    rssMiB: number;
  };
  const window = n - warm;
  return {
    target: `baseline: ${mode === 'undici' ? 'undici + extract' : 'our fetcher + extract'}`,
    round,
    checks: n,
    failures: r.failures,
    perSecond: r2((window / (r.done[n - 1]! - r.done[warm - 1]!)) * 1000),
    // The site's CPU over the whole baseline run (its warm-up included), so slightly high.
    cpuPerCheck: { process: r2(r.cpuWindowMs / window), site: r2((site1 - site0) / n), postgres: 0 },
    rss: {
      atWarm: NaN,
      peak: maxOf([...samples.map((s) => s.mib), Math.round(r.rssMiB * 10) / 10]),
      atEnd: Math.round(r.rssMiB * 10) / 10,
      samples: [],
    },
  };
}

const load1 = () => Math.round(os.loadavg()[0]! * 10) / 10;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

if (!fs.existsSync(REAL_SERVER)) throw new Error(`${REAL_SERVER} is missing: run \`npm run build\` first`);
const pageBytes = fs.statSync(path.join(ROOT, 'test/fixtures/pages', BENCH_PAGE)).size;
console.log(
  `checks bench: ${SETTINGS.checks} checks per target per round, ${SETTINGS.rounds} rounds, concurrency ${SETTINGS.concurrency}, ` +
    `page ${BENCH_PAGE} (${Math.round(pageBytes / 1024)} KB, served ${SETTINGS.encoding}), databases ${DATABASES.join(', ')}`,
);
console.log(
  'per-domain limits lifted for the one loopback host: FETCH_DOMAIN_DELAY_MS=0, FETCH_DOMAIN_CONCURRENCY=100',
);

const site = await startSite();
const results: Record<string, { runs: (Measured & { load1: number })[]; ratio: number[]; compare?: unknown }> = {};
try {
  for (const kind of DATABASES) {
    const target = await prepare(kind);
    const runs: (Measured & { load1: number })[] = [];
    try {
      for (let round = 0; round < SETTINGS.rounds; round++) {
        const order: (() => Promise<Measured>)[] = [
          ...WORKER_THREADS.map((threads) => () => runWorker(target, site, round, threads)),
          ...(COMPARE_SERVER ? [() => runWorker(target, site, round, WORKER_THREADS[0]!, COMPARE_SERVER)] : []),
          ...BASELINES.map((m) => () => runBaseline(m, site, round)),
        ];
        if (round % 2 === 1) order.reverse();
        for (const run of order) {
          const l = load1();
          const m = await run();
          runs.push({ ...m, load1: l });
          console.log(
            `${kind} round ${round + 1} ${m.target}: ${m.perSecond} checks/s, CPU ${m.cpuPerCheck.process} ms/check, ` +
              `RSS peak ${m.rss.peak} MiB, failures ${m.failures}, load ${l}`,
          );
        }
      }
    } finally {
      if (target.dir) cleanup(target.dir);
    }
    // Per round, the shipped worker (first variant) over the plain fetch+parse baseline.
    const ratio: number[] = [];
    for (let round = 0; round < SETTINGS.rounds; round++) {
      const w = runs.find(
        (r) =>
          r.round === round &&
          r.target.startsWith('worker') &&
          r.target.includes(`EXTRACT_THREADS=${WORKER_THREADS[0]})`),
      );
      const b = runs.find((r) => r.round === round && r.target.startsWith('baseline: undici'));
      if (w && b) ratio.push(r2(w.perSecond / b.perSecond));
    }
    results[kind] = { runs, ratio };
    console.log(`\n${kind}:`);
    table(
      runs.map((r) => ({
        round: r.round + 1,
        target: r.target,
        'checks/s': r.perSecond,
        'cpu ms/check': r.cpuPerCheck.process,
        'site ms/check': r.cpuPerCheck.site,
        'pg ms/check': r.cpuPerCheck.postgres,
        'rss warm': Number.isNaN(r.rss.atWarm) ? '-' : r.rss.atWarm,
        'rss peak': r.rss.peak,
        'rss end': r.rss.atEnd,
        fail: r.failures,
        load: r.load1,
      })),
    );
    for (const target of [...new Set(runs.map((r) => r.target))]) {
      console.log(
        `median ${target}: ${r2(median(runs.filter((r) => r.target === target).map((r) => r.perSecond)))} checks/s`,
      );
    }
    console.log(`worker (EXTRACT_THREADS=${WORKER_THREADS[0]}) / undici baseline, per round: ${ratio.join(', ')}`);
    if (COMPARE_SERVER) {
      // Per round, CPU per check of this build's worker over the other build's: the cost ratio of a check.
      const cpu: number[] = [];
      const rate: number[] = [];
      for (let round = 0; round < SETTINGS.rounds; round++) {
        const mine = runs.find(
          (r) =>
            r.round === round &&
            r.target.startsWith('worker') &&
            r.target.includes(`EXTRACT_THREADS=${WORKER_THREADS[0]})`),
        );
        const theirs = runs.find((r) => r.round === round && r.target.startsWith('other build'));
        if (mine && theirs) {
          cpu.push(r2(mine.cpuPerCheck.process / theirs.cpuPerCheck.process));
          rate.push(r2(theirs.perSecond / mine.perSecond));
        }
      }
      console.log(
        `this build / other build (${COMPARE_SERVER}), per round: CPU per check ${cpu.join(', ')}; time per check ${rate.join(', ')}`,
      );
      results[kind]!.compare = { server: COMPARE_SERVER, cpuRatio: cpu, timeRatio: rate };
    }
  }
} finally {
  site.proc.kill('SIGTERM');
  await exited(site.proc);
}

writeResult(process.env.BENCH_RESULT ?? 'checks', {
  machine: machine(),
  settings: { ...SETTINGS, pageBytes, baselines: BASELINES, extractThreads: WORKER_THREADS, workerEnv: WORKER_ENV },
  results,
});
