/**
 * Measures extractPrices on the ~150 KB fixture page (not a test: timing depends on the
 * machine). Reports CPU time per call as well as wall time, since a busy machine inflates wall
 * time, and two baselines from the same run: htmlparser2 tokenizing the page with no handlers
 * (the floor for any parser-based extraction) and cheerio building its DOM.
 *   node --import tsx test/extraction/helpers/measure.ts [page.html] [iterations]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'cheerio/slim';
import { Parser } from 'htmlparser2';
import { extractPrices } from '../../../src/extraction/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] ?? path.resolve(here, '../../fixtures/pages/big-page.html');
const n = Number(process.argv[3] ?? 400);
const html = fs.readFileSync(file, 'utf8');

function run(label: string, fn: () => unknown): void {
  for (let i = 0; i < 50; i++) fn();
  const wall: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fn();
    wall.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  wall.sort((a, b) => a - b);
  const at = (q: number): string => (wall[Math.floor(q * (n - 1))] ?? 0).toFixed(2);
  const cpuMs = (cpu.user + cpu.system) / 1000 / n;
  console.log(`${label.padEnd(36)} cpu ${cpuMs.toFixed(2)} ms/page  wall p50 ${at(0.5)} p90 ${at(0.9)} ms`);
}

console.log(`${path.basename(file)}: ${(Buffer.byteLength(html) / 1024).toFixed(0)} KB, ${n} runs each`);
run('htmlparser2 tokenize only (floor)', () => new Parser({}).end(html));
run('cheerio/slim load (DOM)', () => load(html));
run('extractPrices (automatic sources)', () => extractPrices(html));
run('extractPrices (with a CSS selector)', () => extractPrices(html, { selector: '.product__price .price' }));
