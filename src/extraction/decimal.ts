/**
 * Exact decimal amounts as strings (`/^\d+(\.\d+)?$/`). Prices never pass through floating
 * point here: a float can't hold 19.99, and a float artefact recorded as a price is a wrong
 * number. Limits follow docs/API-DECISIONS.md ("Money and currency"): at most 11 integer
 * digits and 4 decimal places.
 */
export const MAX_INTEGER_DIGITS = 11;
export const MAX_FRACTION_DIGITS = 4;

export type DecimalCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Joins integer and fraction digits into a decimal string: leading zeros of the integer part
 * go, the fraction is kept as written ("19.90" stays "19.90"); zeros beyond the 4th decimal
 * place are dropped, other digits there make the amount unusable.
 */
export function makeDecimal(intDigits: string, fracDigits = ''): DecimalCheck {
  if (!/^\d*$/.test(intDigits) || !/^\d*$/.test(fracDigits) || intDigits.length + fracDigits.length === 0) {
    return { ok: false, reason: 'is not a number' };
  }
  const int = intDigits.replace(/^0+(?=\d)/, '') || '0';
  let frac = fracDigits;
  if (frac.length > MAX_FRACTION_DIGITS) {
    if (/[1-9]/.test(frac.slice(MAX_FRACTION_DIGITS))) {
      return { ok: false, reason: `has more than ${MAX_FRACTION_DIGITS} decimal places` };
    }
    frac = frac.slice(0, MAX_FRACTION_DIGITS);
  }
  if (int.length > MAX_INTEGER_DIGITS) return { ok: false, reason: 'is too large to be a price' };
  return { ok: true, value: frac ? `${int}.${frac}` : int };
}

/** A machine-written decimal ("1299", "19.99", "0.5"); anything else is refused. */
export function decimalFromPlainString(s: string): DecimalCheck {
  const m = /^\s*(\d*)(?:\.(\d+))?\s*$/.exec(s);
  if (!m || (m[1] === '' && m[2] === undefined)) return { ok: false, reason: 'is not a plain decimal number' };
  return makeDecimal(m[1] ?? '', m[2] ?? '');
}

/**
 * A JSON number as its shortest decimal text: 19.99 -> "19.99" (what the page author wrote,
 * since JSON.parse and String() round-trip), 1e-7 -> "0.0000001" (then refused for its
 * decimal places).
 */
export function decimalFromNumber(n: number): DecimalCheck {
  if (!Number.isFinite(n)) return { ok: false, reason: 'is not a finite number' };
  if (n < 0 || Object.is(n, -0)) return { ok: false, reason: 'is negative' };
  const s = String(n);
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  if (!m) return { ok: false, reason: 'is not a number' };
  const digits = (m[1] ?? '') + (m[2] ?? '');
  const exp = Number(m[3] ?? 0);
  const point = (m[1] ?? '').length + exp;
  if (point <= 0) return makeDecimal('0', '0'.repeat(-point) + digits);
  if (point >= digits.length) return makeDecimal(digits + '0'.repeat(point - digits.length), '');
  return makeDecimal(digits.slice(0, point), digits.slice(point));
}

/** An integer count of minor units (Shopify's cents): 129900 with 2 digits -> "1299.00". */
export function decimalFromMinorUnits(units: number | string, digits = 2): DecimalCheck {
  const s = typeof units === 'number' ? (Number.isSafeInteger(units) && units >= 0 ? String(units) : '') : units.trim();
  if (!/^\d+$/.test(s)) return { ok: false, reason: 'is not a whole number of minor units' };
  if (digits === 0) return makeDecimal(s, '');
  const padded = s.padStart(digits + 1, '0');
  return makeDecimal(padded.slice(0, -digits), padded.slice(-digits));
}

/** Orders two decimal strings numerically (-1, 0, 1); "19.9" equals "19.90". */
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
