import { numberToDecimal, parseDecimal } from '../../money/decimal.js';

/**
 * Exact comparisons of prices, thresholds and percentages as fractions of big integers: a drop
 * from 19.99 to 17.991 is exactly 10 %, which binary floating point would miss.
 */
export interface Ratio {
  n: bigint;
  d: bigint;
}

/**
 * Parsed values by their text: a batch judges the same few prices, thresholds and percentages
 * under many rules, and parsing dominated evaluation. Ratios are never mutated; the cache is
 * dropped whole when it grows past its bound.
 */
const parsed = new Map<string | number, Ratio>();
const PARSED_MAX = 50_000;

export function ratio(value: string | number): Ratio {
  const known = parsed.get(value);
  if (known !== undefined) return known;
  const s = parseDecimal(typeof value === 'number' ? numberToDecimal(value) : value);
  const r = { n: s.units, d: 10n ** BigInt(s.scale) };
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(value, r);
  return r;
}

export const mul = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.n, d: a.d * b.d });
export const sub = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.d - b.n * a.d, d: a.d * b.d });
export const add = (a: Ratio, b: Ratio): Ratio => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });

/** a < b: -1, a = b: 0, a > b: 1 (denominators are always positive). */
export function cmp(a: Ratio, b: Ratio): number {
  const l = a.n * b.d;
  const r = b.n * a.d;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** 1 + percent / 100, or 1 - percent / 100: a threshold moved by a hysteresis band. */
const factors = new Map<string, Ratio>();
export const factor = (percent: string, sign: 1 | -1): Ratio => {
  const key = `${sign}${percent}`;
  const known = factors.get(key);
  if (known !== undefined) return known;
  const one = { n: 1n, d: 1n };
  const part = percentOf(percent, one);
  const r = sign === 1 ? add(one, part) : sub(one, part);
  if (factors.size >= PARSED_MAX) factors.clear();
  factors.set(key, r);
  return r;
};

/** percent % of base. */
export const percentOf = (percent: number | string, base: Ratio): Ratio => {
  const p = ratio(percent);
  return mul(base, { n: p.n, d: p.d * 100n });
};
