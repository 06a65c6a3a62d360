import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  proc: ChildProcess;
  pid: number;
  url: string;
  /** ms from spawn to the first 200 from the ready path. */
  readyMs: number;
  logFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  /** node arguments after the executable (script and its arguments). */
  args: string[];
  env: Record<string, string>;
  /** stdout and stderr of the child go here (the server logs a JSON line per request). */
  logFile: string;
  readyPath?: string;
  timeoutMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ok(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await r.arrayBuffer();
    return r.status === 200;
  } catch {
    return false;
  }
}

/**
 * Spawns `node ...args` on a free port and waits for the first 200 from `readyPath`,
 * polling every 5 ms (so readyMs is exact to about 5 ms).
 */
export async function startServer(opts: StartOptions): Promise<Server> {
  const port = await freePort();
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a');
  const started = performance.now();
  const proc = spawn(process.execPath, opts.args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
  const timeoutMs = opts.timeoutMs ?? Number(process.env.BENCH_START_TIMEOUT_MS ?? 60_000);
  const deadline = started + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`${opts.name} exited before it was ready; see ${opts.logFile}`);
    if (await ok(url + (opts.readyPath ?? '/readyz'))) break;
    if (performance.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${opts.name} not ready after ${timeoutMs} ms (BENCH_START_TIMEOUT_MS); see ${opts.logFile}`);
    }
    await sleep(5);
  }
  const readyMs = performance.now() - started;
  return {
    name: opts.name,
    proc,
    pid: proc.pid!,
    url,
    readyMs,
    logFile: opts.logFile,
    async stop() {
      if (gone) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Resident set size of a process in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

/** Samples RSS every `everyMs` until stopped; returns the peak and the mean. */
export function sampleRss(pid: number, everyMs = 250): () => { peak: number; mean: number } {
  const samples: number[] = [];
  const t = setInterval(() => {
    try {
      samples.push(rssMiB(pid));
    } catch {
      // the process is gone
    }
  }, everyMs);
  return () => {
    clearInterval(t);
    const peak = Math.max(...samples);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    return { peak, mean: Math.round(mean * 10) / 10 };
  };
}

/** Ends child processes this bench started if it is interrupted. */
const live = new Set<Server>();
export function track(s: Server): Server {
  live.add(s);
  void new Promise((r) => s.proc.once('exit', r)).then(() => live.delete(s));
  return s;
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const s of live) s.proc.kill('SIGKILL');
    process.exit(130);
  });
}

/** CPU time (user + system) of a process in ms, from /proc (Linux; 10 ms resolution); 0 if gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 1/100 s
  } catch {
    return 0;
  }
}

/** Pids whose command line matches. */
export function pidsMatching(re: RegExp): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (re.test(fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' '))) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * CPU used while `fn` runs by: a server process, the PostgreSQL backends serving `pgDatabase`,
 * the Redis server, and this process (the load generator). In ms.
 */
export async function cpuDuring<T>(
  serverPid: number,
  pgDatabase: string | undefined,
  fn: () => Promise<T>,
): Promise<{ value: T; cpu: { server: number; postgres: number; redis: number; loadgen: number } }> {
  const pgRe = pgDatabase ? new RegExp(`^postgres: \\S+: \\S+ ${pgDatabase} `) : undefined;
  const redisPids = pidsMatching(/^redis-server /);
  const pgBefore = new Map((pgRe ? pidsMatching(pgRe) : []).map((p) => [p, cpuMs(p)]));
  const server0 = cpuMs(serverPid);
  const redis0 = redisPids.reduce((s, p) => s + cpuMs(p), 0);
  const self0 = process.cpuUsage();
  const value = await fn();
  const self = process.cpuUsage(self0);
  const server = cpuMs(serverPid) - server0;
  const redis = redisPids.reduce((s, p) => s + cpuMs(p), 0) - redis0;
  let postgres = 0;
  for (const p of pgRe ? pidsMatching(pgRe) : []) postgres += cpuMs(p) - (pgBefore.get(p) ?? 0);
  return { value, cpu: { server, postgres, redis, loadgen: Math.round((self.user + self.system) / 1000) } };
}
