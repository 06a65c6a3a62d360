import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './proc.js';

export const env = (name: string, def: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

/** Settings shared by every benchmark script; all overridable from the environment. */
export const SETTINGS = {
  connections: env('BENCH_CONNECTIONS', 50),
  durationS: env('BENCH_DURATION', 10),
  warmupS: env('BENCH_WARMUP', 3),
};

/** Which databases to run: BENCH_DB=pg, BENCH_DB=pglite or both (default). */
export const DATABASES = (process.env.BENCH_DB ?? 'pg,pglite').split(',').map((s) => s.trim()) as ('pg' | 'pglite')[];
for (const d of DATABASES) if (d !== 'pg' && d !== 'pglite') throw new Error(`BENCH_DB: unknown database ${d}`);

/** The built server; BENCH_SERVER=/path/to/other/dist/cli/main.js measures another build. */
export const REAL_SERVER = path.resolve(process.env.BENCH_SERVER ?? path.join(ROOT, 'dist/cli/main.js'));
export const MINIMAL_SERVER = path.join(ROOT, 'bench/servers/minimal.ts');

/**
 * BENCH_PROFILE=1: a CPU profile per thread in bench/results/profiles/NAME/ (the main thread's is
 * the largest file; tsx's loader and the PGlite worker write their own). BENCH_PROFILE=perf:
 * `--perf-basic-prof`, so that `perf record -g -p PID` names the JavaScript functions beside the
 * native ones, which V8's profile leaves as "(anonymous) (native)".
 */
function profileArgs(name?: string): string[] {
  // --perf-basic-prof also turns on V8's log, by default a file per isolate in the working tree.
  if (process.env.BENCH_PROFILE === 'perf')
    return [
      '--perf-basic-prof',
      `--logfile=${path.join(os.tmpdir(), 'pricehound-bench-v8.log')}`,
      '--no-logfile-per-isolate',
    ];
  return process.env.BENCH_PROFILE === '1' && name
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results/profiles', name)}`]
    : [];
}

export function realServerArgs(profileName?: string, server = REAL_SERVER): string[] {
  if (!fs.existsSync(server)) throw new Error(`${server} is missing: run \`npm run build\` first`);
  return [...profileArgs(profileName), server, 'start'];
}

export const minimalServerArgs = (profileName?: string) => [
  ...profileArgs(profileName),
  '--import',
  'tsx',
  MINIMAL_SERVER,
];

export function machine() {
  const cpus = os.cpus();
  let commit = process.env.BENCH_COMMIT ?? '';
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      // not a git checkout
    }
  }
  return {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    cpu: `${cpus.length} x ${cpus[0]?.model ?? 'unknown'}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
  };
}

export function workDir(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ph-bench-${name}-`));
}

export function cleanup(dir: string) {
  if (process.env.BENCH_KEEP === '1') {
    console.log(`kept ${dir}`);
    return;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

export function writeResult(name: string, data: unknown) {
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  console.log(`\nresults written to ${path.relative(ROOT, file)}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function table(rows: Record<string, string | number>[]) {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(width[i]!)).join('  ');
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ''))));
}
