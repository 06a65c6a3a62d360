/**
 * The shared real product pages (../shared/data/product-pages beside the checkout: half of Zyte's
 * product-extraction benchmark, with its ground truth) and the benchmark's own scoring. The
 * pages are read where they lie, never copied into the repository.
 *
 * Scoring (the benchmark's evaluate.py, as its README states): per page, a right answer is a
 * true positive; a wrong answer a false positive and, where the page has a price, also a false
 * negative; no answer where a price exists a false negative; no answer where none exists counts
 * nothing. Availability the same with InStock / OutOfStock (pre-order counts as InStock).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { compareDecimals } from '../../src/money/decimal.js';
import { ROOT } from './proc.js';

export const PRODUCT_PAGES_DIR = path.resolve(
  process.env.PRODUCT_PAGES_DIR ?? path.join(ROOT, '../shared/data/product-pages'),
);

export interface ProductPage {
  key: string;
  /** The URL the page was saved from. */
  url: string;
  /** Accepted amounts (any one counts); empty where the page has no price to find. */
  prices: string[];
  availability?: 'InStock' | 'OutOfStock';
  /** The gzip file as the benchmark served it. */
  file: string;
}

export function productPages(dir = PRODUCT_PAGES_DIR): ProductPage[] {
  const truth = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<
    string,
    { url: string; price?: string[]; price_corrected?: string[]; availability?: string[] }
  >;
  return Object.entries(truth)
    .map(([key, t]) => ({
      key,
      url: t.url,
      prices: (t.price_corrected ?? t.price ?? []).map((p) => p.trim()),
      availability: t.availability?.[0] as ProductPage['availability'],
      file: path.join(dir, 'html', `${key}.html.gz`),
    }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

export const readPageGzip = (p: ProductPage): Buffer => fs.readFileSync(p.file);
export const readPageHtml = (p: ProductPage): string => zlib.gunzipSync(readPageGzip(p)).toString('utf8');

export interface Score {
  tp: number;
  fp: number;
  fn: number;
}

export const emptyScore = (): Score => ({ tp: 0, fp: 0, fn: 0 });

export function prf(s: Score): { p: number; r: number; f1: number } {
  const p = s.tp + s.fp ? s.tp / (s.tp + s.fp) : 1;
  const r = s.tp + s.fn ? s.tp / (s.tp + s.fn) : 1;
  return { p, r, f1: p + r ? (2 * p * r) / (p + r) : 0 };
}

export const formatScore = (s: Score): string => {
  const { p, r, f1 } = prf(s);
  return `P ${p.toFixed(3)}  R ${r.toFixed(3)}  F1 ${f1.toFixed(3)}  (tp ${s.tp}, fp ${s.fp}, fn ${s.fn})`;
};

export type Verdict = 'right' | 'wrong' | 'none' | 'none (nothing to find)';

/** Scores one answer (null: none) into `s`; `same` says whether it is one of the accepted ones. */
function scoreOne(s: Score, accepted: number, got: unknown, same: boolean): Verdict {
  if (got === null) {
    if (accepted) s.fn++;
    return accepted ? 'none' : 'none (nothing to find)';
  }
  if (same) {
    s.tp++;
    return 'right';
  }
  s.fp++;
  if (accepted) s.fn++;
  return 'wrong';
}

/** A price answer (decimal text, null: none), compared as a decimal with the accepted amounts. */
export const scorePrice = (s: Score, truth: readonly string[], got: string | null): Verdict =>
  scoreOne(s, truth.length, got, got !== null && truth.some((t) => compareDecimals(t, got) === 0));

/** An availability answer (null: none; the caller gives pre-order as InStock). */
export const scoreAvailability = (
  s: Score,
  truth: ProductPage['availability'],
  got: 'InStock' | 'OutOfStock' | null,
): Verdict => scoreOne(s, truth ? 1 : 0, got, got === truth);
