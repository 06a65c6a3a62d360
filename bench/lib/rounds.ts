import os from 'node:os';
import type { Seeded } from './seed.js';
import { env, SETTINGS, sleep, table } from './common.js';
import { type ConnectionPlan, type LoadResult, problems, runLoad } from './load.js';
import { cpuDuring, rssMiB, sampleRss, type Server, track } from './proc.js';
import { runWrk, wrkAvailable } from './wrk.js';

/**
 * BENCH_LOADGEN=wrk|autocannon. wrk (default when installed: `apt-get install wrk`) costs the
 * machine a few µs per request; autocannon runs in this Node process and costs about as much CPU
 * as the server it measures, which on 2 cores is taken from the servers.
 */
export const LOADGEN = (process.env.BENCH_LOADGEN ?? (wrkAvailable() ? 'wrk' : 'autocannon')) as 'wrk' | 'autocannon';

/**
 * Rounds of short measurements rather than a few long ones. On this 2-core VM the speed of the
 * whole machine drifts by up to ±50 % over tens of seconds (the same query's PostgreSQL CPU per
 * request moved between 79 and 239 µs within one run), so a ratio of two measurements is only as
 * good as they are close in time. Ten rounds of 3 s per target (the same 30 s as three of 10 s)
 * put a and b seconds apart and give the median ten ratios instead of three. A control with two
 * identical builds: medians 0.83 against 0.68 with 3 rounds of 8 s, 0.76 against 0.74 with 10 of
 * 3 s (docs/BENCHMARKS.md, session 4).
 */
export const ROUNDS = Math.max(1, Math.floor(env('BENCH_ROUNDS', 10)));
/** Seconds per measurement in a round (BENCH_DURATION). */
export const SLICE_S = env('BENCH_DURATION', 3);
const PATHS_PER_CONNECTION = 20;

/**
 * BENCH_NICE=-10 runs this process and the servers at that priority (needs root): on a machine
 * shared with other work it keeps that work from skewing the comparison. Off by default. The
 * PostgreSQL and Redis servers keep their own priority.
 */
export const NICE = process.env.BENCH_NICE ? Number(process.env.BENCH_NICE) : undefined;
if (NICE !== undefined) os.setPriority(NICE);

/** One measured run; cpuUsPerReq is CPU time per answered request, in microseconds. */
export type Run = LoadResult & {
  load1: number;
  cpuUsPerReq: { server: number; postgres: number; redis: number; loadgen: number };
};

/**
 * The phase at a set load (Rounds.measureAtSetLoad): the think time each connection waits between
 * an answer and its next request, the rate it aims at (connections / thinkMs) and the runs.
 */
export interface SetLoad {
  thinkMs: number;
  targetRps: number;
  runs: Run[];
}

export interface Target {
  id: string;
  label: string;
  server: Server;
  plan: (i: number) => ConnectionPlan;
  /** The database whose backends serve this target (for CPU accounting), if PostgreSQL. */
  pgDatabase?: string;
  rssIdleMiB: number;
  rssPeakMiB: number;
  /** Runs at saturation (measure). */
  runs: Run[];
  /** Set by measureAtSetLoad for the targets it measures. */
  setLoad?: SetLoad;
}

/** Each connection: its own key (round robin) and 20 product ids it cycles through. */
export function plans(seeded: Seeded | undefined): (i: number) => ConnectionPlan {
  return (i) => {
    const ids = seeded?.productIds ?? ['prod_0000000000aaaaaaaaaaaaaaaa'];
    const paths: string[] = [];
    for (let k = 0; k < PATHS_PER_CONNECTION; k++)
      paths.push(`/api/v1/products/${ids[(i * PATHS_PER_CONNECTION + k) % ids.length]}`);
    const key = seeded?.keys[i % seeded.keys.length] ?? 'ph_live_' + 'x'.repeat(43);
    return { headers: { authorization: `Bearer ${key}`, accept: 'application/json' }, paths };
  };
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
export const r2 = (n: number) => Math.round(n * 100) / 100;

/** Medians over runs (max: the largest), as in Rounds.summary. */
function medians(runs: Run[]) {
  return {
    rps: Math.round(median(runs.map((r) => r.rps))),
    p50: r2(median(runs.map((r) => r.p50))),
    p90: r2(median(runs.map((r) => r.p90))),
    p99: r2(median(runs.map((r) => r.p99))),
    max: Math.max(...runs.map((r) => r.max)),
    requests: runs.reduce((s, r) => s + r.requests, 0),
    cpuUsPerReq: {
      server: median(runs.map((r) => r.cpuUsPerReq.server)),
      postgres: median(runs.map((r) => r.cpuUsPerReq.postgres)),
      redis: median(runs.map((r) => r.cpuUsPerReq.redis)),
      loadgen: median(runs.map((r) => r.cpuUsPerReq.loadgen)),
    },
  };
}

export class Rounds {
  readonly targets: Target[] = [];

  add(id: string, label: string, server: Server, plan: (i: number) => ConnectionPlan, pgDatabase?: string): Target {
    track(server);
    if (NICE !== undefined) os.setPriority(server.pid, NICE);
    const t: Target = { id, label, server, plan, pgDatabase, rssIdleMiB: NaN, rssPeakMiB: 0, runs: [] };
    this.targets.push(t);
    return t;
  }

  get(id: string): Target {
    const t = this.targets.find((x) => x.id === id);
    if (!t) throw new Error(`no target ${id}`);
    return t;
  }

  /** One run of t; recorded into t.runs, or into setLoad.runs (with its think time) when given. */
  private async run(t: Target, durationS: number, record: boolean, setLoad?: SetLoad) {
    const load1 = r2(os.loadavg()[0]!);
    const stopRss = sampleRss(t.server.pid);
    const load = {
      url: t.server.url,
      connections: SETTINGS.connections,
      plan: t.plan,
      durationS,
      ...(setLoad ? { thinkMs: setLoad.thinkMs } : {}),
    };
    const { value: r, cpu } = await cpuDuring(
      t.server.pid,
      t.pgDatabase,
      async (): Promise<LoadResult & { loadgenCpuMs?: number }> => (LOADGEN === 'wrk' ? runWrk(load) : runLoad(load)),
    );
    if (r.loadgenCpuMs !== undefined) cpu.loadgen = r.loadgenCpuMs;
    const rss = stopRss();
    const bad = problems(r);
    if (bad) throw new Error(`${t.label}: ${bad}; see ${t.server.logFile}`);
    if (!record) return;
    const per = (ms: number) => Math.round((ms * 1000) / r.requests);
    const cpuUsPerReq = {
      server: per(cpu.server),
      postgres: per(cpu.postgres),
      redis: per(cpu.redis),
      loadgen: per(cpu.loadgen),
    };
    if (setLoad) {
      setLoad.runs.push({ ...r, load1, cpuUsPerReq });
    } else {
      // "RSS peak under load" is the saturated phase's.
      t.runs.push({ ...r, load1, cpuUsPerReq });
      t.rssPeakMiB = Math.max(t.rssPeakMiB, rss.peak);
    }
    console.log(
      `  ${t.label.padEnd(34)} ${setLoad ? `think ${setLoad.thinkMs} ms  ` : ''}${String(r.rps).padStart(6)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
        `CPU/req: server ${cpuUsPerReq.server} us, postgres ${cpuUsPerReq.postgres} us, redis ${cpuUsPerReq.redis} us  (load avg ${load1})`,
    );
  }

  /** Idle RSS, a warm-up per target, then ROUNDS rounds visiting every target (reversed every other round). */
  async measure(): Promise<void> {
    await sleep(2_000);
    for (const t of this.targets) t.rssIdleMiB = rssMiB(t.server.pid);
    for (const t of this.targets) if (SETTINGS.warmupS > 0) await this.run(t, SETTINGS.warmupS, false);
    await this.rounds(this.targets, (t) => this.run(t, SLICE_S, true));
  }

  /**
   * The same rounds (ROUNDS x SLICE_S per target, interleaved, order reversed every other
   * round) at a set load: each target that pace() gives a think time is measured with it (wrk
   * only); the others are left out. No warm-up: it follows measure(), on warm servers.
   */
  async measureAtSetLoad(pace: (t: Target) => { thinkMs: number; targetRps: number } | undefined): Promise<void> {
    if (LOADGEN !== 'wrk') throw new Error('a set load needs wrk (think time per connection); BENCH_LOADGEN=wrk');
    const targets: Target[] = [];
    for (const t of this.targets) {
      const p = pace(t);
      if (!p) continue;
      t.setLoad = { thinkMs: p.thinkMs, targetRps: p.targetRps, runs: [] };
      targets.push(t);
    }
    await this.rounds(targets, (t) => this.run(t, SLICE_S, true, t.setLoad));
  }

  private async rounds(targets: Target[], run: (t: Target) => Promise<void>) {
    for (let round = 0; round < ROUNDS; round++) {
      console.log(`round ${round + 1} of ${ROUNDS}`);
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) await run(t);
    }
  }

  summary() {
    return this.targets.map((t) => ({
      id: t.id,
      target: t.label,
      ...medians(t.runs),
      rssIdleMiB: t.rssIdleMiB,
      rssPeakMiB: t.rssPeakMiB,
      runs: t.runs,
    }));
  }

  /** Like summary(), for the targets measured at a set load. */
  setLoadSummary() {
    return this.targets.flatMap((t) =>
      t.setLoad
        ? [
            {
              id: t.id,
              target: t.label,
              thinkMs: t.setLoad.thinkMs,
              targetRps: t.setLoad.targetRps,
              ...medians(t.setLoad.runs),
              runs: t.setLoad.runs,
            },
          ]
        : [],
    );
  }

  /** Ratio of two targets' req/s, per round (measured seconds apart) and the median of those. */
  ratio(a: string, b: string): { median: number; rounds: number[] } {
    const ta = this.get(a);
    const tb = this.get(b);
    const rounds = ta.runs.map((r, i) => r2(r.rps / tb.runs[i]!.rps));
    return { median: r2(median(rounds)), rounds };
  }

  /** Ratio of two targets' server CPU per request, per round, and the median of those. */
  cpuRatio(a: string, b: string): { median: number; rounds: number[] } {
    const ta = this.get(a);
    const tb = this.get(b);
    const rounds = ta.runs.map((r, i) => r2(r.cpuUsPerReq.server / tb.runs[i]!.cpuUsPerReq.server));
    return { median: r2(median(rounds)), rounds };
  }

  printSummary(showRss: (t: Target) => boolean = () => true, title = 'medians over the rounds') {
    console.log(`\n${title}`);
    table(
      this.summary().map((s) => ({
        target: s.target,
        'req/s': s.rps,
        'p50 ms': s.p50,
        'p90 ms': s.p90,
        'p99 ms': s.p99,
        'max ms': r2(s.max),
        'server CPU us/req': s.cpuUsPerReq.server,
        'pg CPU us/req': s.cpuUsPerReq.postgres,
        'redis CPU us/req': s.cpuUsPerReq.redis,
        'RSS idle MiB': showRss(this.get(s.id)) ? s.rssIdleMiB : '-',
        'RSS peak under load MiB': showRss(this.get(s.id)) ? s.rssPeakMiB : '-',
      })),
    );
  }

  printSetLoadSummary(title = 'medians over the rounds, at a set load') {
    console.log(`\n${title}`);
    table(
      this.setLoadSummary().map((s) => ({
        target: s.target,
        'think ms': s.thinkMs,
        'target req/s': s.targetRps,
        'achieved req/s': s.rps,
        'p50 ms': s.p50,
        'p90 ms': s.p90,
        'p99 ms': s.p99,
        'max ms': r2(s.max),
      })),
    );
  }

  async stopAll() {
    await Promise.all(this.targets.map((t) => t.server.stop()));
  }
}
