import http from 'node:http';
import { percentile } from './load.js';

export interface ProbeResult {
  sent: number;
  answered: number;
  statuses: Record<string, number>;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Open-loop light load: one GET every `everyMs` (a new one is sent on time even while earlier
 * ones wait), each timed from send to the end of its body. Unlike a closed loop, a server that
 * stalls cannot slow the probe down and so hide its own stall.
 */
export async function probe(opts: {
  url: string;
  paths: string[];
  headers: Record<string, string>;
  everyMs: number;
  durationS: number;
}): Promise<ProbeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(opts.url);
  const lat: number[] = [];
  const statuses: Record<string, number> = {};
  const pending = new Set<Promise<void>>();
  let sent = 0;
  const one = (path: string) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.get({ host: target.hostname, port: target.port, path, headers: opts.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          lat.push(performance.now() - t0);
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', () => {
        statuses.error = (statuses.error ?? 0) + 1;
        resolve();
      });
    });
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (now - start >= opts.durationS * 1000) return resolve();
      // catch up if this process's timer was late, so the rate holds
      while (sent < Math.floor((now - start) / opts.everyMs) + 1) {
        const p = one(opts.paths[sent % opts.paths.length]!);
        pending.add(p);
        void p.then(() => pending.delete(p));
        sent++;
      }
      setTimeout(tick, Math.max(0, start + sent * opts.everyMs - performance.now()));
    };
    tick();
  });
  await Promise.all(pending);
  agent.destroy();
  const sorted = Float64Array.from(lat).sort();
  return {
    sent,
    answered: lat.length,
    statuses,
    p50: r2(percentile(sorted, 50)),
    p90: r2(percentile(sorted, 90)),
    p99: r2(percentile(sorted, 99)),
    max: r2(sorted[sorted.length - 1] ?? NaN),
  };
}
