import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadOptions, LoadResult } from './load.js';
import { cpuMs } from './proc.js';

/**
 * wrk (C, epoll, from Debian's `wrk` package) as the load generator. autocannon runs in Node
 * and spends 60-100 µs of CPU per request, as much as the server under test; on a 2-core machine
 * that CPU is taken from the servers, so every figure measured the load generator as much as
 * the server. wrk spends a few µs per request.
 *
 * The plans' requests are prebuilt into a Lua script: each wrk connection walks the whole list
 * (key and path rotate per request, so every connection uses every key and path).
 *
 * Closed loop: each connection sends its next request as soon as the answer to the previous one
 * arrives, so the server runs at saturation. With opts.thinkMs each connection instead waits that
 * long between an answer and its next request (wrk's Lua `delay()` hook), which sets the offered
 * load to about connections / (thinkMs + latency) req/s. wrk's timer has whole milliseconds and
 * truncates delay()'s return value, so a fractional think time is dithered between the two whole
 * values around it (mean = thinkMs); the first request of every connection waits a random
 * 0..thinkMs instead, so the connections do not start in step.
 */
export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** Runs wrk for opts.durationS against opts.url with the plans' requests; summarises like runLoad. */
export async function runWrk(opts: LoadOptions): Promise<LoadResult & { loadgenCpuMs: number }> {
  if (opts.overallRate) throw new Error('wrk does not do open-loop rates; use autocannon (BENCH_LOADGEN=autocannon)');
  const thinkMs = opts.thinkMs ?? 0;
  if (!(thinkMs >= 0) || !Number.isFinite(thinkMs))
    throw new Error(`thinkMs must be a finite non-negative number, not ${thinkMs}`);
  const requests: string[] = [];
  for (let i = 0; i < opts.connections; i++) {
    const { headers, paths } = opts.plan(i);
    const h = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    for (const p of paths) requests.push(`GET ${p} HTTP/1.1\r\nHost: bench\r\n${h}\r\n`);
  }
  const threads = Math.max(1, Math.min(2, os.cpus().length));
  // wrk gives each thread connections / threads connections (integer division) and its own Lua state.
  const perThread = Math.floor(opts.connections / threads);
  // The delay hook, only when pacing (without it wrk sends at once, as before).
  //
  // Latency excludes the think time: in wrk 4.x (src/wrk.c; Debian's 4.1.0 here) socket_writeable()
  // calls delay() and arms a timer that re-enters socket_writeable(), and only then sets
  // c->start = time_us(), right before writing the request; response_complete() records
  // now - c->start. Checked on this machine: 10 connections, delay() = 20, a server answering in
  // 5 ms gave p50 5.8 ms and 379 req/s (= 10 / 26.4 ms); delay() = 20.9 gave the same rate, which
  // is why the think time is dithered. wrk's docs (SCRIPTING) only say "delay() returns the number
  // of milliseconds to delay sending the next request".
  //
  // wrk also corrects its latency histogram for coordinated omission after the run
  // (stats_correct: every latency >= 2 x the mean per-connection cycle adds samples at multiples
  // of that cycle). When pacing, the cycle includes the think time, so only stalls longer than
  // about 2 x (thinkMs + latency) get synthetic samples.
  //
  // setup() runs once per thread in wrk's main Lua state; it numbers the threads so that each
  // thread's Lua state seeds its own random sequence (the initial stagger would else repeat per thread).
  const delayLua =
    thinkMs > 0
      ? `local think = ${thinkMs}
local whole = math.floor(think)
local frac = think - whole
local first = ${perThread}
local threads = 0
setup = function(thread) threads = threads + 1; thread:set("ph_thread", threads) end
delay = function()
  if first > 0 then
    if first == ${perThread} then math.randomseed(os.time() + 7919 * (ph_thread or 0)) end
    first = first - 1
    return math.floor(math.random() * think)
  end
  if math.random() < frac then return whole + 1 end
  return whole
end
`
      : '';
  const script = path.join(os.tmpdir(), `ph-wrk-${process.pid}.lua`);
  fs.writeFileSync(
    script,
    `local reqs = {${requests.map((r) => JSON.stringify(r)).join(',')}}
local n = #reqs
local i = 0
init = function(args) i = math.random(n) - 1 end
request = function() i = (i % n) + 1; return reqs[i] end
${delayLua}done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("PHWRK %d %d %d %d %d %d %d %.1f %.1f %.1f %.1f %.1f\\n",
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`,
  );
  const child = spawn(
    'wrk',
    [
      '-t',
      String(threads),
      '-c',
      String(opts.connections),
      '-d',
      `${opts.durationS}s`,
      '--timeout',
      '30s',
      '-s',
      script,
      opts.url,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  // A child's CPU can only be read while it exists: sample it until it exits (the last 100 ms
  // of a 10 s run are missed, which is noise next to the servers' figures).
  let lastCpuMs = 0;
  const sampler = setInterval(() => {
    try {
      if (child.pid) lastCpuMs = cpuMs(child.pid);
    } catch {
      // exited between the check and the read
    }
  }, 100);
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => resolve());
  }).finally(() => clearInterval(sampler));
  fs.rmSync(script, { force: true });
  const line = out.split('\n').find((l) => l.startsWith('PHWRK '));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const [reqs, durUs, connect, read, write, status, timeout, p50, p90, p99, max, mean] = line
    .slice(6)
    .split(' ')
    .map(Number) as number[];
  const ms = (us: number) => Math.round(us / 10) / 100;
  const errors = connect! + read! + write!;
  return {
    requests: reqs!,
    rps: Math.round(reqs! / (durUs! / 1e6)),
    p50: ms(p50!),
    p90: ms(p90!),
    p99: ms(p99!),
    max: ms(max!),
    mean: ms(mean!),
    statuses: status ? { '2xx': reqs! - status, 'non-2xx': status } : { '2xx': reqs! },
    errors,
    timeouts: timeout!,
    loadgenCpuMs: lastCpuMs,
  };
}
