/**
 * One number as a shop wrote it ("1.299,00", "1’299.50", "1,29,999") split into integer and
 * fraction digits, or the reason it cannot be read without guessing.
 */

const decimalByLocale = new Map<string, '.' | ',' | undefined>();

/** The decimal separator a BCP 47 locale writes, if it is '.' or ','. */
export function localeDecimal(locale: string): '.' | ',' | undefined {
  if (!decimalByLocale.has(locale)) {
    let d: '.' | ',' | undefined;
    try {
      const part = new Intl.NumberFormat(locale).formatToParts(1.5).find((p) => p.type === 'decimal')?.value;
      d = part === ',' ? ',' : part === '.' ? '.' : undefined;
    } catch {
      d = undefined;
    }
    decimalByLocale.set(locale, d);
  }
  return decimalByLocale.get(locale);
}

export interface NumberContext {
  /** ",-" / ".–" followed the number: every separator in it groups thousands. */
  dash?: boolean;
  /** Cents written apart after the currency ("35€ 99"): every separator groups thousands. */
  cents?: string;
  /** Decimal places of the currency's minor unit (0 JPY, 2 EUR, 3 KWD); undefined when unknown. */
  minor?: number;
  /** The decimal separator a locale or the source prescribes. */
  decimal?: '.' | ',';
}

export type NumberRead = { int: string; frac: string } | { reason: string };

/**
 * Which separator is decimal. One separator followed by exactly three digits ("1.299") is read,
 * in order: as thousands for a currency without minor unit; as the `decimal` hint says; as
 * decimals for a three-decimal currency, or when the integer part is 0 or longer than three
 * digits; as thousands for a currency with one or two decimals; otherwise not at all.
 */
function decimalSeparator(raw: string, ctx: NumberContext): { sep?: string } | { reason: string } {
  if (ctx.dash || ctx.cents !== undefined) return {};
  const dots = raw.split('.').length - 1;
  const commas = raw.split(',').length - 1;
  if (dots && commas) return { sep: raw.lastIndexOf('.') > raw.lastIndexOf(',') ? '.' : ',' };
  if (dots + commas !== 1) return {};
  const ch = dots ? '.' : ',';
  const [intPart = '', after = ''] = raw.split(ch);
  if (/['’ʼ ]/.test(raw) || after.length !== 3) return { sep: ch };
  if (ctx.minor === 0) return {};
  if (ctx.decimal) return ctx.decimal === ch ? { sep: ch } : {};
  if (ctx.minor === 3) return { sep: ch };
  const digitsBefore = intPart.replace(/\D/g, '');
  if (digitsBefore === '0' || digitsBefore.length > 3) return { sep: ch };
  if (ctx.minor !== undefined) return {};
  const whole = raw.replace(/\D/g, '');
  return {
    reason: `"${raw}" could be ${whole} or ${intPart}.${after}: nothing says whether "${ch}" separates thousands or decimals; set the listing's locale or currency`,
  };
}

export function readNumber(raw: string, ctx: NumberContext): NumberRead {
  if (/^[.,]\d{2}$/.test(raw)) return { int: '0', frac: raw.slice(1) };
  if (/^\d+$/.test(raw)) return ctx.cents !== undefined ? { int: raw, frac: ctx.cents } : { int: raw, frac: '' };
  const decided = decimalSeparator(raw, ctx);
  if ('reason' in decided) return decided;
  let intPart = raw;
  let frac = ctx.cents ?? '';
  if (decided.sep) {
    const at = raw.lastIndexOf(decided.sep);
    intPart = raw.slice(0, at);
    frac = raw.slice(at + 1);
    if (!/^\d+$/.test(frac)) return { reason: `"${raw}" is not a well-formed number` };
  }
  const groupChars = new Set(intPart.replace(/\d/g, ''));
  if (groupChars.size > 1) return { reason: `"${raw}" mixes thousands separators` };
  if (groupChars.size === 1) {
    const groups = intPart.split(/[^\d]/);
    const western = groups.every((g, i) => (i === 0 ? g.length >= 1 && g.length <= 3 : g.length === 3));
    const indian =
      groups.length >= 3 &&
      groups.every((g, i) =>
        i === 0 ? g.length >= 1 && g.length <= 2 : i === groups.length - 1 ? g.length === 3 : g.length === 2,
      );
    if (!western && !indian) return { reason: `"${raw}" is not a well-formed number` };
  }
  return { int: intPart.replace(/\D/g, ''), frac };
}
