import autocannon from 'autocannon';

/** What one connection sends: its headers and the paths it cycles through (prebuilt, no per-request work). */
export interface ConnectionPlan {
  headers: Record<string, string>;
  paths: string[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  /** The plan of connection number `i` (0-based). */
  plan: (i: number) => ConnectionPlan;
  /** Requests per second over all connections (open-loop); unset = as fast as answers come. */
  overallRate?: number;
  /**
   * Think time (wrk only): each connection waits this many ms between receiving an answer and
   * sending its next request, so the offered load is about connections / (thinkMs + latency)
   * req/s, below saturation. The latency recorded excludes it. Unset or 0 = no wait (closed loop
   * at saturation).
   */
  thinkMs?: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  /** Latencies in ms, exact (from autocannon's per-response timings, not its 1 ms histogram). */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** Runs autocannon in this process and summarises it. */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  if (opts.thinkMs) throw new Error('autocannon has no think time; use wrk (BENCH_LOADGEN=wrk)');
  let next = 0;
  let lat = new Float64Array(1 << 18);
  let n = 0;
  const statuses: Record<string, number> = {};
  const instance = autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationS,
    timeout: 30,
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
    setupClient(client) {
      const { headers, paths } = opts.plan(next++);
      client.setRequests(paths.map((path) => ({ method: 'GET', path, headers })));
    },
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (n === lat.length) {
      const bigger = new Float64Array(lat.length * 2);
      bigger.set(lat);
      lat = bigger;
    }
    lat[n++] = ms;
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const result = await instance;
  const sorted = lat.subarray(0, n).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    requests: n,
    rps: round(n / result.duration, 0),
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[n - 1] ?? NaN),
    mean: round(sum / n),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Non-2xx answers or socket errors make a run meaningless; say so loudly. */
export function problems(r: LoadResult): string | undefined {
  const bad = Object.entries(r.statuses).filter(([s]) => !s.startsWith('2'));
  if (bad.length === 0 && r.errors === 0 && r.timeouts === 0) return undefined;
  return `statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}, timeouts ${r.timeouts}`;
}
