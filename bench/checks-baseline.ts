// The baseline of bench/checks.ts: the same pages fetched and parsed with the same concurrency,
// without the scheduler, the database or the lease bookkeeping. Reads its job from the
// environment and prints one JSON line with a completion time per page.
//   BASELINE_MODE=undici   plain undici request() over a keep-alive Agent, gunzip/brotli by
//                          hand, body to a string, extractPrices (the floor: fetch + parse)
//   BASELINE_MODE=fetcher  our HTTP fetcher (address guard, robots.txt, per-host limiter,
//                          size caps, charset) + extractPrices: the check minus the database
import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { extractPrices } from '../src/extraction/index.js';
import { createHttpFetcher } from '../src/fetcher/http.js';
import { pageUrl } from './checks-pages.js';

const mode = process.env.BASELINE_MODE ?? 'undici';
/** The same URLs bench/checks.ts gives its listings: pageUrl(tag, i). */
const urls = Array.from({ length: Number(process.env.BASELINE_N ?? '0') }, (_, i) =>
  pageUrl(process.env.BASELINE_SITE ?? '', process.env.BASELINE_TAG ?? 'b', i),
);
const concurrency = Number(process.env.BASELINE_CONCURRENCY ?? '16');
/** CPU is reported from the completion of this many pages on (the warm-up is left out). */
const warm = Number(process.env.BASELINE_WARM ?? '0');

const agent = new Agent({ keepAliveTimeout: 30_000 });
const fetcher = createHttpFetcher(loadConfig(process.env));

async function fetchPlain(url: string): Promise<{ body: string; finalUrl: string }> {
  const res = await request(url, {
    dispatcher: agent,
    headers: { 'accept-encoding': 'gzip, br', 'user-agent': 'pricehound-bench' },
  });
  const raw = Buffer.from(await res.body.arrayBuffer());
  const enc = res.headers['content-encoding'];
  const buf = enc === 'gzip' ? await gunzip(raw) : enc === 'br' ? await brotli(raw) : raw;
  return { body: buf.toString('utf8'), finalUrl: url };
}
const gunzip = (b: Buffer) =>
  new Promise<Buffer>((resolve, reject) => zlib.gunzip(b, (e, r) => (e ? reject(e) : resolve(r))));
const brotli = (b: Buffer) =>
  new Promise<Buffer>((resolve, reject) => zlib.brotliDecompress(b, (e, r) => (e ? reject(e) : resolve(r))));

const done: number[] = [];
let failures = 0;
let next = 0;
const t0 = performance.now();
let cpuAtWarm = process.cpuUsage();
async function lane() {
  for (;;) {
    const i = next++;
    if (i >= urls.length) return;
    const url = urls[i]!;
    try {
      const page = mode === 'fetcher' ? await fetcher.fetch({ url, respectRobots: true }) : await fetchPlain(url);
      const x = extractPrices(page.body, { baseUrl: page.finalUrl });
      if (!x.chosen) failures++;
    } catch {
      failures++;
    }
    done.push(performance.now() - t0);
    if (done.length === warm) cpuAtWarm = process.cpuUsage();
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
const cpu = process.cpuUsage(cpuAtWarm);
await fetcher.close();
await agent.close();
process.stdout.write(
  `${JSON.stringify({ done, failures, cpuWindowMs: (cpu.user + cpu.system) / 1000, rssMiB: process.memoryUsage().rss / 2 ** 20 })}\n`,
);
