/** ISO 4217 currencies: the one set of codes we accept, and each one's minor unit. */

const ISO_CODES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** A known ISO 4217 code in upper case, as stored. */
export function isIsoCode(code: string): boolean {
  return ISO_CODES.has(code);
}

/** A request's currency: three letters of a known code, in any case (handlers upper-case it). */
export function isCurrency(value: string): boolean {
  return /^[A-Za-z]{3}$/.test(value) && ISO_CODES.has(value.toUpperCase());
}

/**
 * Withdrawn codes pages still write for today's currency. RUR: Russian shops and Yandex's
 * product feeds write the ruble as RUR (the code before the 1998 redenomination), meaning RUB.
 */
const STILL_WRITTEN: Readonly<Record<string, string>> = { RUR: 'RUB' };

/** A well-formed, known ISO 4217 code in upper case, or undefined (for codes read off pages). */
export function normaliseCurrencyCode(code: unknown): string | undefined {
  if (typeof code !== 'string') return undefined;
  const c = code.trim().toUpperCase();
  return ISO_CODES.has(c) ? c : STILL_WRITTEN[c];
}

const minorDigitsCache = new Map<string, number>();

/** Decimal places of the currency's minor unit: 2 for EUR, 0 for JPY, 3 for KWD. */
export function minorDigits(code: string | undefined): number | undefined {
  if (!code) return undefined;
  let d = minorDigitsCache.get(code);
  if (d === undefined) {
    try {
      d =
        new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      d = 2;
    }
    minorDigitsCache.set(code, d);
  }
  return d;
}
