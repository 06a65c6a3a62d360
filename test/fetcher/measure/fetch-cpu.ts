/**
 * CPU cost of the HTTP fetcher per ~150 KB page (a measurement, not a test). The fixture site
 * runs in a child process, so only the fetcher's CPU (this process's user + system time) is
 * counted. From the repository root:
 *   node --import tsx test/fetcher/measure/fetch-cpu.ts [identity|gzip|br]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHttpFetcher } from '../../../src/fetcher/http.js';
import { testConfig } from '../helpers/fetcher.js';

const mode = process.argv[2] ?? 'identity';
const CONCURRENCY = 16;
const N = 3000;

const child = spawn(process.execPath, ['--import', 'tsx', 'test/fetcher/measure/site-process.ts', mode], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [line] = (await once(child.stdout!, 'data')) as [Buffer];
const url = `${line.toString().trim()}/pages/big-page.html`;
const fetcher = createHttpFetcher(testConfig({ fetchDomainConcurrency: 100 }));

async function run(n: number): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await fetcher.fetch({ url, respectRobots: true });
    }),
  );
}

await run(500); // warm-up: JIT, connections, robots.txt cache
for (let round = 0; round < 3; round++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(N);
  const cpu = process.cpuUsage(cpu0);
  const s = (performance.now() - t0) / 1000;
  console.log(
    `${mode}: ${N} fetches of big-page.html (150 KB), ${CONCURRENCY} at a time: ` +
      `${((cpu.user + cpu.system) / N).toFixed(0)} µs CPU per fetch (user ${(cpu.user / N).toFixed(0)}, system ${(cpu.system / N).toFixed(0)}); ` +
      `${(N / s).toFixed(0)} fetches/s wall; RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`,
  );
}
await fetcher.close();
child.kill('SIGTERM');
