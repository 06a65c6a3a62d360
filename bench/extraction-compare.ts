// The visible-price finder's cost against another checkout's, in one process: extractPrices on
// the ~150 KB big-page.html with the finder off and on, this checkout's and the other's, in
// blocks of 5 calls taking turns (order reversed every other round), CPU time per page.
//   node --import tsx bench/extraction-compare.ts /path/to/other/checkout [rounds=300]
//   COMPARE_PAGES=shared node --import tsx bench/extraction-compare.ts OTHER [rounds]
//     the same over the shared real product pages (../shared/data/product-pages, read where
//     they lie): each block reads every page once; CPU ms per page is the block's mean.
// e.g. the commit before a change: git worktree add --detach /tmp/before HEAD~1 (and link
// node_modules into it). The ratio of each round's blocks (run back to back, so a neighbour's
// load hits both) is reported as a median with its middle half; on a shared machine the
// fastest blocks (p10) are the other robust figure.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractPrices } from '../src/extraction/index.js';
import { productPages, readPageHtml } from './lib/product-pages.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const other = process.argv[2];
if (!other) {
  console.error('usage: node --import tsx bench/extraction-compare.ts OTHER_CHECKOUT [ROUNDS]');
  process.exit(2);
}
const rounds = Number(process.argv[3] ?? 300);
const theirs = (
  (await import(path.resolve(other, 'src/extraction/index.ts'))) as { extractPrices: typeof extractPrices }
).extractPrices;
const shared = process.env.COMPARE_PAGES === 'shared';
const pages = shared
  ? productPages().map((p) => ({
      html: readPageHtml(p),
      baseUrl: `http://127.0.0.1/${p.key}${new URL(p.url).pathname}`,
    }))
  : [{ html: fs.readFileSync(path.join(ROOT, 'test/fixtures/pages/big-page.html'), 'utf8'), baseUrl: undefined }];
const each = (f: typeof extractPrices, visibleFallback: boolean) => () => {
  for (const p of pages) f(p.html, { visibleFallback, ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}) });
};
const variants: Record<string, () => unknown> = {
  'other, finder off': each(theirs, false),
  'other, finder on': each(theirs, true),
  'this, finder off': each(extractPrices, false),
  'this, finder on': each(extractPrices, true),
};
const names = Object.keys(variants);
const calls = shared ? 1 : 5;
for (let i = 0; i < (shared ? 3 : 100); i++) for (const f of Object.values(variants)) f();
const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < rounds; r++) {
  for (const n of r % 2 ? [...names].reverse() : names) {
    const c = process.cpuUsage();
    for (let i = 0; i < calls; i++) (variants[n] as () => unknown)();
    const u = process.cpuUsage(c);
    (ms[n] as number[]).push((u.user + u.system) / 1000 / (calls * pages.length));
  }
}
const q = (a: number[], p: number): number => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))] ?? 0;
console.log(
  shared
    ? `${pages.length} shared product pages, ${rounds} rounds of one pass over them per variant, CPU ms per page:`
    : `big-page.html, ${rounds} rounds of 5 calls per variant, CPU ms per page:`,
);
for (const n of names) {
  const a = ms[n] as number[];
  console.log(`  ${n.padEnd(18)} p10 ${q(a, 0.1).toFixed(2)}  median ${q(a, 0.5).toFixed(2)}`);
}
const ratio = (a: string, b: string): string => {
  const x = ms[a] as number[];
  const y = ms[b] as number[];
  const paired = x.map((v, i) => v / (y[i] as number));
  return `p10 ${(q(x, 0.1) / q(y, 0.1)).toFixed(2)}, each round median ${q(paired, 0.5).toFixed(2)} (middle half ${q(paired, 0.25).toFixed(2)}-${q(paired, 0.75).toFixed(2)})`;
};
console.log(`  other: on / off  ${ratio('other, finder on', 'other, finder off')}`);
console.log(`  this:  on / off  ${ratio('this, finder on', 'this, finder off')}`);
console.log(`  this on / other off  ${ratio('this, finder on', 'other, finder off')}`);
console.log(`  this on / other on   ${ratio('this, finder on', 'other, finder on')}`);
