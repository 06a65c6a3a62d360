import { compareDecimals, isZeroDecimal, numberToDecimal, parseDecimal } from '../money/decimal.js';

/**
 * Whether a check's reading is recorded or held (design/API.md "Checks: a price that cannot be
 * right is held, not recorded"; docs/MONITORING.md "Held readings"). Pure: the state it judges
 * is read by src/checks/sql.ts (readHoldState) under the listing's row lock, in the transaction
 * that records the check.
 */

/** The account's default `hold_factor`: accounts have no settings yet, so every account's is 4. */
export const DEFAULT_HOLD_FACTOR = 4;

/**
 * How soon a held listing is checked again. Four minutes, so that with a worker's poll (a second)
 * and a busy worker the recheck runs within the promised five.
 */
export const HOLD_RECHECK_SECONDS = 240;

/** What the listing's state says about a new reading. Prices are exact decimal text. */
export interface HoldState {
  last_price: string | null;
  last_currency: string | null;
  /** null: the account's default; 0: never hold. */
  hold_factor: number | null;
  /** The listing's pending held reading, if any. */
  held_id: string | null;
  held_price: string | null;
  held_currency: string | null;
  held_reason: string | null;
  held_previous_price: string | null;
  held_previous_currency: string | null;
  held_factor: number | null;
  /** The reading a person rejected last, until a price is recorded. */
  rejected_price: string | null;
  rejected_currency: string | null;
}

/** Why a reading is held: what a held check stores and shows as `held`. */
export interface Hold {
  reason: string;
  previousPrice: string;
  previousCurrency: string;
  /** max(read / previous, previous / read), 2 decimals; null when the currencies differ or a price is 0. */
  factor: number | null;
}

export type HoldDecision =
  /** An ordinary reading: recorded. */
  | { kind: 'record' }
  /** The pending held reading read again: recorded, and the held check is confirmed by this one. */
  | { kind: 'confirm'; heldId: string; hold: Hold }
  /** Held; `recheck`: the next check runs within five minutes (not for a reading a person rejected). */
  | { kind: 'hold'; hold: Hold; recheck: boolean };

const same = (price: string, currency: string, otherPrice: string | null, otherCurrency: string | null) =>
  otherPrice !== null && otherCurrency === currency && compareDecimals(price, otherPrice) === 0;

/** x >= y * f, exactly (unsigned decimal text; f a positive number). */
function atLeastTimes(x: string, y: string, f: number): boolean {
  const a = parseDecimal(x);
  const b = parseDecimal(y);
  const k = parseDecimal(numberToDecimal(f));
  const pow = (n: number) => 10n ** BigInt(n);
  // a.units / 10^a.scale >= (b.units / 10^b.scale) * (k.units / 10^k.scale)
  return a.units * pow(b.scale + k.scale) >= b.units * k.units * pow(a.scale);
}

const show = (price: string, currency: string) => `${Number(price)} ${currency}`;
const percent = (p: number) => (p >= 10 ? String(Math.round(p)) : String(Math.round(p * 10) / 10));

/** How many times apart two prices are (>= 1, 2 decimals); null across currencies or with a 0. */
function timesApart(price: string, currency: string, lastPrice: string, lastCurrency: string): number | null {
  if (currency !== lastCurrency || isZeroDecimal(price) || isZeroDecimal(lastPrice)) return null;
  const ratio = Number(price) / Number(lastPrice);
  return Math.round(Math.max(ratio, 1 / ratio) * 100) / 100;
}

/**
 * Why `price` in `currency` cannot be right next to the listing's last recorded price, or null
 * when it can. Exact: a reading at exactly `factor` times the last price (up or down) is held.
 */
export function holdReason(
  price: string,
  currency: string,
  lastPrice: string,
  lastCurrency: string,
  factor: number,
): Hold | null {
  const previous = { previousPrice: lastPrice, previousCurrency: lastCurrency };
  const last = show(lastPrice, lastCurrency);
  const read = show(price, currency);
  if (currency !== lastCurrency) {
    return {
      ...previous,
      factor: null,
      reason: `The price read, ${read}, is in another currency than the listing's last recorded price, ${last}`,
    };
  }
  const readZero = isZeroDecimal(price);
  const lastZero = isZeroDecimal(lastPrice);
  if (readZero && lastZero) return null;
  if (readZero || lastZero) {
    return {
      ...previous,
      factor: null,
      reason: `The price read, ${read}, is ${readZero ? 'zero' : 'not zero'} and the listing's last recorded price is ${last}`,
    };
  }
  const rise = atLeastTimes(price, lastPrice, factor);
  const fall = atLeastTimes(lastPrice, price, factor);
  if (!rise && !fall) return null;
  const ratio = Number(price) / Number(lastPrice);
  const times = timesApart(price, currency, lastPrice, lastCurrency)!;
  const change = rise
    ? `${times} times the listing's last recorded price, ${last} (a rise of ${percent((ratio - 1) * 100)} %)`
    : `${times} times lower than the listing's last recorded price, ${last} (a fall of ${percent((1 - ratio) * 100)} %)`;
  return {
    ...previous,
    factor: times,
    reason: `The price read, ${read}, is ${change}; readings ${factor} or more times higher or lower are held (hold_factor)`,
  };
}

/** The decision for a successful reading of a listing whose state is `s`. */
export function decideHold(price: string, currency: string, s: HoldState): HoldDecision {
  const factor = s.hold_factor ?? DEFAULT_HOLD_FACTOR;
  if (factor === 0 || s.last_price === null || s.last_currency === null) return { kind: 'record' };
  const rejected = same(price, currency, s.rejected_price, s.rejected_currency);
  if (!rejected && s.held_id !== null && same(price, currency, s.held_price, s.held_currency)) {
    return {
      kind: 'confirm',
      heldId: s.held_id,
      hold: {
        reason: s.held_reason ?? '',
        previousPrice: s.held_previous_price ?? s.last_price,
        previousCurrency: s.held_previous_currency ?? s.last_currency,
        factor: s.held_factor,
      },
    };
  }
  const hold = holdReason(price, currency, s.last_price, s.last_currency, factor);
  if (rejected) {
    const why =
      hold?.reason ??
      `The price read, ${show(price, currency)}, next to the listing's last recorded price, ${show(s.last_price, s.last_currency)}`;
    return {
      kind: 'hold',
      recheck: false,
      hold: {
        previousPrice: s.last_price,
        previousCurrency: s.last_currency,
        factor: timesApart(price, currency, s.last_price, s.last_currency),
        reason: `${why}. A person rejected this same reading: it stays held until someone accepts it or the page shows another price`,
      },
    };
  }
  return hold ? { kind: 'hold', recheck: true, hold } : { kind: 'record' };
}
