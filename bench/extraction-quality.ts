// Price and availability quality of extraction over the fixture pages, with the visible-price
// finder off (before) and on (after), and the finder's cost on the ~150 KB page.
//   npm run bench:extraction
//
// Truth: test/fixtures/visible-truth.json (pages written after real shops' layouts, each with
// the price, currency and stock a shopper sees, or "refuse" where no single price can be
// trusted), and, for the older fixture pages, the expectations of test/fixtures/pages/manifest.json
// (reviewed by hand; a page whose expectation is "no price" counts as one to refuse).
// A price counts as right when amount and currency match; a wrong price is both a false
// positive and a false negative; a refusal on a page with a price is a false negative.
// Availability: in stock / out of stock / pre-order; "unknown" is no answer.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Availability, type ExtractOptions, extractPrices } from '../src/extraction/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAGES = path.join(ROOT, 'test/fixtures/pages');

interface Case {
  file: string;
  options?: ExtractOptions;
  price?: string;
  currency?: string | null;
  stock: Availability;
}

function cases(): { fresh: Case[]; older: Case[] } {
  const truth = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/visible-truth.json'), 'utf8')) as Array<
    Case & { refuse?: string; stock?: Availability }
  >;
  const fresh = truth.map((t) => ({
    file: t.file,
    options: t.options,
    price: t.refuse ? undefined : t.price,
    currency: t.currency,
    stock: t.stock ?? 'unknown',
  }));
  const manifest = JSON.parse(fs.readFileSync(path.join(PAGES, 'manifest.json'), 'utf8')) as Array<{
    file: string;
    options?: ExtractOptions;
    expect: { chosen: { price: string; currency: string | null } | null; availability: Availability };
  }>;
  const older = manifest
    .filter((m) => !truth.some((t) => t.file === m.file))
    .map((m) => ({
      file: m.file,
      options: m.options,
      price: m.expect.chosen?.price,
      currency: m.expect.chosen?.currency,
      stock: m.expect.availability,
    }));
  return { fresh, older };
}

interface Score {
  tp: number;
  fp: number;
  fn: number;
}
const f1 = (s: Score): { p: number; r: number; f: number } => {
  const p = s.tp + s.fp ? s.tp / (s.tp + s.fp) : 1;
  const r = s.tp + s.fn ? s.tp / (s.tp + s.fn) : 1;
  return { p, r, f: p + r ? (2 * p * r) / (p + r) : 0 };
};
const same = (a: string, b: string): boolean => Number(a) === Number(b);

function score(list: Case[], visibleFallback: boolean): { price: Score; stock: Score } {
  const price: Score = { tp: 0, fp: 0, fn: 0 };
  const stock: Score = { tp: 0, fp: 0, fn: 0 };
  for (const c of list) {
    const r = extractPrices(fs.readFileSync(path.join(PAGES, c.file), 'utf8'), { ...c.options, visibleFallback });
    const got = r.chosen;
    if (got) {
      if (c.price !== undefined && same(got.price, c.price) && (got.currency ?? null) === (c.currency ?? null))
        price.tp++;
      else {
        price.fp++;
        if (c.price !== undefined) price.fn++;
      }
    } else if (c.price !== undefined) price.fn++;
    if (r.availability !== 'unknown') {
      if (r.availability === c.stock) stock.tp++;
      else {
        stock.fp++;
        if (c.stock !== 'unknown') stock.fn++;
      }
    } else if (c.stock !== 'unknown') stock.fn++;
  }
  return { price, stock };
}

const fmt = (s: Score): string => {
  const { p, r, f } = f1(s);
  return `P ${p.toFixed(3)}  R ${r.toFixed(3)}  F1 ${f.toFixed(3)}  (tp ${s.tp}, fp ${s.fp}, fn ${s.fn})`;
};

const { fresh, older } = cases();
for (const [label, list] of [
  [`new pages (${fresh.length})`, fresh],
  [`older fixture cases (${older.length})`, older],
  [`all (${fresh.length + older.length})`, [...fresh, ...older]],
] as const) {
  console.log(`\n${label}`);
  for (const on of [false, true]) {
    const s = score([...list], on);
    console.log(`  finder ${on ? 'on ' : 'off'}  price  ${fmt(s.price)}`);
    console.log(`              stock  ${fmt(s.stock)}`);
  }
}

// Cost: the ~150 KB page (JSON-LD, 24 related products, heavy head), finder off and on. CPU time
// of blocks of 10 calls, the two taking turns (order reversed every other round); the fastest
// block of each counts, since on a shared machine slower blocks measure the neighbours.
const big = fs.readFileSync(path.join(PAGES, 'big-page.html'), 'utf8');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
for (let i = 0; i < 50; i++) {
  extractPrices(big, { visibleFallback: false });
  extractPrices(big);
}
const best = { off: Infinity, on: Infinity };
const cpu: Record<'off' | 'on', number[]> = { off: [], on: [] };
const wall: Record<'off' | 'on', number[]> = { off: [], on: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const visible of round % 2 ? [true, false] : [false, true]) {
    const key = visible ? 'on' : 'off';
    const c = process.cpuUsage();
    const t = process.hrtime.bigint();
    for (let i = 0; i < 10; i++) extractPrices(big, { visibleFallback: visible });
    wall[key].push(Number(process.hrtime.bigint() - t) / 1e7);
    const u = process.cpuUsage(c);
    cpu[key].push((u.user + u.system) / 1e4);
    best[key] = Math.min(best[key], (u.user + u.system) / 1e4);
  }
}
const quantile = (a: number[], q: number): number => [...a].sort((x, y) => x - y)[Math.floor(q * (a.length - 1))] ?? 0;
const median = (a: number[]): number => quantile(a, 0.5);
// Each round's on/off ratio: the two blocks ran back to back, so a neighbour's load hits both.
const paired = cpu.on.map((on, i) => on / (cpu.off[i] as number));
console.log(
  `\nbig-page.html ${(Buffer.byteLength(big) / 1024).toFixed(0)} KB, ${ROUNDS} rounds of 10 calls each, taking turns:`,
);
console.log(
  `  CPU per page, fastest block: finder off ${best.off.toFixed(2)} ms, on ${best.on.toFixed(2)} ms, ratio ${(best.on / best.off).toFixed(2)}`,
);
console.log(
  `  CPU ratio on/off of each round: median ${median(paired).toFixed(2)}, middle half ${quantile(paired, 0.25).toFixed(2)}-${quantile(paired, 0.75).toFixed(2)}`,
);
console.log(
  `  wall per page, median block: finder off ${median(wall.off).toFixed(2)} ms, on ${median(wall.on).toFixed(2)} ms, ratio ${(median(wall.on) / median(wall.off)).toFixed(2)}`,
);
