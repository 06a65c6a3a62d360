/**
 * Exact decimal arithmetic on strings for exchange rates, with BigInt: an amount times a rate,
 * or divided by one, rounded once to 4 decimal places, half away from zero (what PostgreSQL's
 * round(numeric, 4) does). Never through floating point: 0.1 * 3 is 0.30000000000000004 there.
 */

interface Scaled {
  /** The digits as an integer, sign included. */
  units: bigint;
  /** Decimal places: value = units / 10^scale. */
  scale: number;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

export function parseDecimal(text: string): Scaled {
  const m = DECIMAL.exec(text);
  if (!m) throw new RangeError(`not a plain decimal: ${JSON.stringify(text)}`);
  const frac = m[3] ?? '';
  const units = BigInt((m[2] ?? '0') + frac);
  return { units: m[1] ? -units : units, scale: frac.length };
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
