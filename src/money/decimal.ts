/**
 * Exact decimal amounts as text. Prices never pass through floating point: a float cannot hold
 * 19.99, and a float artefact recorded as a price is a wrong number. Two kinds of text live here:
 *
 * - amounts as we store them (`/^\d+(\.\d+)?$/`, at most MONEY_INTEGER_DIGITS integer digits and
 *   MONEY_DECIMALS places: numeric(15, 4) in migrations/), built with `makeDecimal` and its
 *   readers of page and JSON text;
 * - exact arithmetic with BigInt for conversion: an amount times a rate, or divided by one,
 *   rounded once to 4 places half away from zero, as PostgreSQL's round(numeric, 4) does.
 */

/** Integer digits of a stored amount (99 999 999 999.9999 at most). */
export const MONEY_INTEGER_DIGITS = 11;
/** Decimal places of a stored amount. */
export const MONEY_DECIMALS = 4;
/** The largest amount we store, as a JSON number. */
export const MAX_MONEY = 99_999_999_999.9999;

export type DecimalCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Joins integer and fraction digits into a stored amount: leading zeros of the integer part
 * go, the fraction is kept as written ("19.90" stays "19.90"); zeros beyond the 4th decimal
 * place are dropped, other digits there make the amount unusable.
 */
export function makeDecimal(intDigits: string, fracDigits = ''): DecimalCheck {
  if (!/^\d*$/.test(intDigits) || !/^\d*$/.test(fracDigits) || intDigits.length + fracDigits.length === 0) {
    return { ok: false, reason: 'is not a number' };
  }
  const int = intDigits.replace(/^0+(?=\d)/, '') || '0';
  let frac = fracDigits;
  if (frac.length > MONEY_DECIMALS) {
    if (/[1-9]/.test(frac.slice(MONEY_DECIMALS))) {
      return { ok: false, reason: `has more than ${MONEY_DECIMALS} decimal places` };
    }
    frac = frac.slice(0, MONEY_DECIMALS);
  }
  if (int.length > MONEY_INTEGER_DIGITS) return { ok: false, reason: 'is too large to be a price' };
  return { ok: true, value: frac ? `${int}.${frac}` : int };
}

/** A machine-written decimal ("1299", "19.99", "0.5"); anything else is refused. */
export function decimalFromPlainString(s: string): DecimalCheck {
  const m = /^\s*(\d*)(?:\.(\d+))?\s*$/.exec(s);
  if (!m || (m[1] === '' && m[2] === undefined)) return { ok: false, reason: 'is not a plain decimal number' };
  return makeDecimal(m[1] ?? '', m[2] ?? '');
}

/**
 * A JSON number as a stored amount: its shortest decimal text (what the page author wrote,
 * since JSON.parse and String() round-trip), 1e-7 -> "0.0000001", then refused for its places.
 */
export function decimalFromNumber(n: number): DecimalCheck {
  if (!Number.isFinite(n)) return { ok: false, reason: 'is not a finite number' };
  if (n < 0 || Object.is(n, -0)) return { ok: false, reason: 'is negative' };
  const [int = '', frac = ''] = numberToDecimal(n).split('.');
  return makeDecimal(int, frac);
}

/** An integer count of minor units (Shopify's cents): 129900 with 2 digits -> "1299.00". */
export function decimalFromMinorUnits(units: number | string, digits = 2): DecimalCheck {
  const s = typeof units === 'number' ? (Number.isSafeInteger(units) && units >= 0 ? String(units) : '') : units.trim();
  if (!/^\d+$/.test(s)) return { ok: false, reason: 'is not a whole number of minor units' };
  if (digits === 0) return makeDecimal(s, '');
  const padded = s.padStart(digits + 1, '0');
  return makeDecimal(padded.slice(0, -digits), padded.slice(-digits));
}

/** Orders two unsigned decimal strings numerically (-1, 0, 1); "19.9" equals "19.90". */
export function compareDecimals(a: string, b: string): number {
  const [ai = '0', af = ''] = a.split('.');
  const [bi = '0', bf = ''] = b.split('.');
  const aInt = ai.replace(/^0+(?=\d)/, '');
  const bInt = bi.replace(/^0+(?=\d)/, '');
  if (aInt.length !== bInt.length) return aInt.length < bInt.length ? -1 : 1;
  if (aInt !== bInt) return aInt < bInt ? -1 : 1;
  const len = Math.max(af.length, bf.length);
  const x = af.padEnd(len, '0');
  const y = bf.padEnd(len, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

export function isZeroDecimal(a: string): boolean {
  return /^0*(\.0*)?$/.test(a);
}

/**
 * Money in a request: a JSON number with at most MONEY_DECIMALS places. Checked on the number's
 * shortest decimal text, which is exact for the up to 15 significant digits our bounds (< 1e11)
 * allow; ajv's multipleOf works in binary floating point and would misjudge large values.
 */
export function isMoney(value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const text = String(value);
  if (/e/i.test(text)) {
    const [mantissa = '', exp = '0'] = text.toLowerCase().split('e');
    const decimals = (mantissa.split('.')[1]?.length ?? 0) - Number(exp);
    return decimals <= MONEY_DECIMALS;
  }
  return (text.split('.')[1]?.length ?? 0) <= MONEY_DECIMALS;
}

/** A JSON number as plain decimal text (no exponent): 1e-7 -> "0.0000001", 19.99 -> "19.99". */
export function numberToDecimal(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  const s = String(Math.abs(n));
  const sign = n < 0 ? '-' : '';
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  if (!m) throw new RangeError(`not a number: ${s}`);
  const digits = (m[1] ?? '') + (m[2] ?? '');
  const point = (m[1] ?? '').length + Number(m[3] ?? 0);
  let text: string;
  if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) text = digits + '0'.repeat(point - digits.length);
  else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  text = text.replace(/^0+(?=\d)/, '');
  if (text.includes('.')) text = text.replace(/\.?0+$/, '');
  return text === '0' ? '0' : sign + text;
}

/** Decimal places and significant digits of plain decimal text. */
export function decimalShape(text: string): { decimals: number; digits: number } {
  const [int = '', frac = ''] = text.replace('-', '').split('.');
  const all = (int + frac).replace(/^0+/, '');
  return { decimals: frac.length, digits: all.length };
}

interface Scaled {
  /** The digits as an integer, sign included. */
  units: bigint;
  /** Decimal places: value = units / 10^scale. */
  scale: number;
}

const SIGNED_DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

export function parseDecimal(text: string): Scaled {
  const m = SIGNED_DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a plain decimal: ${JSON.stringify(text)}`);
  const frac = m[3] ?? '';
  const units = BigInt((m[2] ?? '0') + frac);
  return { units: m[1] ? -units : units, scale: frac.length };
}

const pow10 = (n: number) => 10n ** BigInt(n);

/** numerator / denominator rounded to an integer, half away from zero (denominator > 0). */
function divRound(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  const q = (2n * abs + denominator) / (2n * denominator);
  return negative ? -q : q;
}

/** Units of 10^-4 as text with exactly 4 decimal places ("12.3400", "-0.0050"), like numeric(19,4). */
function formatScaled4(units: bigint): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(5, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -4)}.${digits.slice(-4)}`;
}

/** amount * rate, exactly, rounded to 4 decimal places half away from zero. */
export function multiplyRounded(amount: string, rate: string): string {
  const a = parseDecimal(amount);
  const r = parseDecimal(rate);
  const scale = a.scale + r.scale;
  const product = a.units * r.units;
  return formatScaled4(scale >= 4 ? divRound(product, pow10(scale - 4)) : product * pow10(4 - scale));
}

/** amount / rate (rate > 0), exactly, rounded to 4 decimal places half away from zero. */
export function divideRounded(amount: string, rate: string): string {
  const a = parseDecimal(amount);
  const r = parseDecimal(rate);
  if (r.units <= 0n) throw new RangeError('a rate must be above 0');
  // (A / 10^a) / (R / 10^r) * 10^4 = A * 10^(r + 4) / (R * 10^a)
  return formatScaled4(divRound(a.units * pow10(r.scale + 4), r.units * pow10(a.scale)));
}
