import type { ExchangeRates } from '../../money/convert.js';
import { parseDecimal } from '../../money/decimal.js';
import { DAY_MS } from '../../time.js';

/**
 * `lowest_in_days` (docs/alerts/firing.md): the lowest earlier price of a series within `days`
 * days (24-hour days) before an observation, among the observations recorded before it, in the
 * observation's currency. Live evaluation and preview both compute it here, from rows of the
 * series (and, for the part of a window that every target shares, a minimum the database
 * computed), so they agree by construction.
 *
 * "Recorded before it" is the series' arrival order: observations of a series are inserted
 * under its lock and in time order within a batch (src/prices/series-lock.ts), so their ids
 * follow the order live evaluation saw them. For an observation `o` that is not late, every
 * row with a smaller id is older, so its window is the rows x with x.id < o.id and
 * x.observed_at >= o.observed_at - days. Rows are visited in id order and put at their place
 * in time order in a range-minimum tree: each window is then one query, n log n for n rows,
 * however long the windows.
 */

export interface LowRow {
  id: number;
  /** observed_at in ms. */
  at: number;
  /** Exact decimal text. */
  price: string;
  currency: string;
}

export interface LowTarget {
  id: number;
  at: number;
  currency: string;
}

/** For each target currency and number of days: the minimum of what the rows do not hold (or null). */
export type SharedLows = Map<string, Map<number, string | null>>;

/** Lows of one observation: days -> lowest earlier price (decimal text), null when the window holds none. */
export type Lows = Map<number, string | null>;

/**
 * A price as a count of 10^-4 units (prices and conversions have 4 decimal places): a number
 * while it is exact as one (below 2^53 units, so any price our limits allow), else a bigint.
 */
function units(text: string): bigint {
  const { units: u, scale } = parseDecimal(text);
  return scale === 4 ? u : scale < 4 ? u * 10n ** BigInt(4 - scale) : u / 10n ** BigInt(scale - 4);
}

function text(u: bigint): string {
  const digits = u.toString().padStart(5, '0');
  return `${digits.slice(0, -4)}.${digits.slice(-4)}`;
}

const least = (a: bigint | null, b: bigint | null) => (a === null ? b : b === null || a <= b ? a : b);

/** Minimum over positions [lo, hi) of values set one by one; unset positions hold +Infinity. */
class MinTree {
  private readonly size: number;
  private readonly t: Float64Array;

  constructor(n: number) {
    let size = 1;
    while (size < n) size *= 2;
    this.size = size;
    this.t = new Float64Array(2 * size).fill(Infinity);
  }

  set(i: number, v: number): void {
    let k = i + this.size;
    this.t[k] = v;
    for (k >>= 1; k >= 1; k >>= 1) this.t[k] = Math.min(this.t[2 * k]!, this.t[2 * k + 1]!);
  }

  min(lo: number, hi: number): number {
    let res = Infinity;
    let l = lo + this.size;
    let h = hi + this.size;
    while (l < h) {
      if (l & 1) res = Math.min(res, this.t[l++]!);
      if (h & 1) res = Math.min(res, this.t[--h]!);
      l >>= 1;
      h >>= 1;
    }
    return res;
  }
}

/** The first index of `sorted` whose value is >= x. */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The lows of `targets` (each also one of `rows`, none late) over `rows`, for every number of
 * days in `windows`, combined with `shared` (what the database found for the part of each window
 * the rows leave out). Prices no rate converts into a target's currency are left out.
 */
export async function seriesLows(
  rows: readonly LowRow[],
  targets: readonly LowTarget[],
  windows: readonly number[],
  rates: ExchangeRates,
  shared?: SharedLows,
): Promise<Map<number, Lows>> {
  const out = new Map<number, Lows>();
  if (targets.length === 0 || windows.length === 0) return out;
  const n = rows.length;
  const byTime = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => rows[a]!.at - rows[b]!.at || rows[a]!.id - rows[b]!.id,
  );
  const rankOf = new Int32Array(n);
  byTime.forEach((i, r) => (rankOf[i] = r));
  const ats = Float64Array.from(byTime, (i) => rows[i]!.at);
  const targetOf = new Map(targets.map((t) => [t.id, t]));
  const currencies = [...new Set(targets.map((t) => t.currency))];
  // Each row's price in each target currency, as exact keys for the tree (exactKeys).
  const keys = new Map(
    currencies.map((c) => [
      c,
      exactKeys(
        rows.map((r) => {
          const converted = r.currency === c ? r.price : rates.convert(r.price, r.currency, c);
          return converted === null ? null : units(converted);
        }),
      ),
    ]),
  );
  const trees = new Map(currencies.map((c) => [c, new MinTree(n)]));
  const byArrival = Array.from({ length: n }, (_, i) => i).sort((a, b) => rows[a]!.id - rows[b]!.id);
  for (let k = 0; k < n; k++) {
    // A long series is a few hundred ms of work: other requests are served between slices.
    if (k % SLICE === SLICE - 1) await new Promise<void>((resolve) => setImmediate(resolve));
    const i = byArrival[k]!;
    const at = rankOf[i]!;
    const target = targetOf.get(rows[i]!.id);
    if (target) {
      const tree = trees.get(target.currency)!;
      const { decode } = keys.get(target.currency)!;
      const lows: Lows = new Map();
      for (const days of windows) {
        const inRows = tree.min(lowerBound(ats, target.at - days * DAY_MS), at);
        const outside = shared?.get(target.currency)?.get(days) ?? null;
        const low = least(inRows === Infinity ? null : decode(inRows), outside === null ? null : units(outside));
        lows.set(days, low === null ? null : text(low));
      }
      out.set(target.id, lows);
    }
    for (const [currency, tree] of trees) {
      const key = keys.get(currency)!.key[i]!;
      if (key !== null) tree.set(at, key);
    }
  }
  return out;
}

/** Rows visited per turn of the event loop. */
const SLICE = 4096;

/**
 * Keys that order `values` exactly as numbers: the values themselves while every one is below
 * 2^53, else their ranks (decoded back through the sorted distinct values).
 */
function exactKeys(values: readonly (bigint | null)[]): { key: (number | null)[]; decode: (k: number) => bigint } {
  const limit = BigInt(Number.MAX_SAFE_INTEGER);
  if (values.every((v) => v === null || (v <= limit && v >= -limit))) {
    return { key: values.map((v) => (v === null ? null : Number(v))), decode: (k) => BigInt(k) };
  }
  const distinct = [...new Set(values.filter((v): v is bigint => v !== null))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const rankOf = new Map(distinct.map((v, i) => [v, i]));
  return { key: values.map((v) => (v === null ? null : rankOf.get(v)!)), decode: (k) => distinct[k]! };
}
