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
  const truth = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/visible-truth.json'), 'utf8')) as Array<Case & { refuse?: string; stock?: Availability }>;
  const fresh = truth.map((t) => ({ file: t.file, options: t.options, price: t.refuse ? undefined : t.price, currency: t.currency, stock: t.stock ?? 'unknown' }));
  const manifest = JSON.parse(fs.readFileSync(path.join(PAGES, 'manifest.json'), 'utf8')) as Array<{
    file: string;
    options?: ExtractOptions;
    expect: { chosen: { price: string; currency: string | null } | null; availability: Availability };
  }>;
  const older = manifest
    .filter((m) => !truth.some((t) => t.file === m.file))
    .map((m) => ({ file: m.file, options: m.options, price: m.expect.chosen?.price, currency: m.expect.chosen?.currency, stock: m.expect.availability }));
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
      if (c.price !== undefined && same(got.price, c.price) && (got.currency ?? null) === (c.currency ?? null)) price.tp++;
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

// Cost: the ~150 KB page (JSON-LD, 24 related products, heavy head), finder off and on, interleaved.
const big = fs.readFileSync(path.join(PAGES, 'big-page.html'), 'utf8');
const N = Number(process.env.BENCH_RUNS ?? 300);
for (let i = 0; i < 50; i++) {
  extractPrices(big, { visibleFallback: false });
  extractPrices(big);
}
const off: number[] = [];
const on: number[] = [];
for (let i = 0; i < N; i++) {
  const first = i % 2 === 0;
  for (const visible of first ? [false, true] : [true, false]) {
    const t = process.hrtime.bigint();
    extractPrices(big, { visibleFallback: visible });
    (visible ? on : off).push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}
const median = (a: number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1] ?? 0;
console.log(
  `\nbig-page.html ${(Buffer.byteLength(big) / 1024).toFixed(0)} KB, ${N} runs each, interleaved: finder off ${median(off).toFixed(2)} ms, on ${median(on).toFixed(2)} ms (median), ratio ${(median(on) / median(off)).toFixed(2)}`,
);
