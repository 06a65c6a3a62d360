/**
 * Locale-aware parsing of a price as shops write it, into an exact decimal string and, when the
 * text names it, an ISO 4217 currency.
 *
 * Numbers
 * - Apostrophes (’ ') and spaces (incl. NBSP and narrow NBSP) only ever group thousands.
 * - With both '.' and ',' present the rightmost is the decimal separator: "1.299,00", "1,299.00".
 * - One separator occurring several times groups thousands: "1.299.000", Indian "1,29,999".
 * - One separator occurring once: followed by 1, 2 or 4 digits it is decimal ("1,29", "12.5").
 *   Followed by exactly 3 digits ("1,299", "1.299") it is ambiguous: see read-number.ts. With
 *   no currency, locale or decimal hint to settle it, the text is refused, never guessed.
 * - ",-", ".-", ".–" after the number mean "no cents": "12,-" -> 12, "CHF 1'299.–" -> 1299.
 * - A space after the decimal separator ("1.837, 32 €", "$ 8. 94") and cents written apart
 *   after the currency ("35€ 99") are read as one price when a currency marker is attached.
 * - Superscript cents must be joined by the caller ("$12<sup>99</sup>"); extraction does so.
 *
 * Several numbers in one text
 * - Numbers with a currency marker beat bare numbers (quantities, model numbers, "128GB").
 * - Dropped: percentages, unit prices ("4,99 €/kg", "1,99 €/100 g", "1 kg = 4,99 €", "($0.50/oz)"
 *   when another price stands outside parentheses), savings ("Save $5", "Sie sparen 3 €"),
 *   instalments ("10x de R$ 26,00"). A price per piece ("$4.99/each") is the price; a price per
 *   period ("$9.99/mo") is the price with its `period`.
 * - Two prices joined by "-", "–", "to", "bis", "à", "do"... are a range: amount is the low bound
 *   and `range` says so. "From $9.99", "ab 9,99 €", "à partir de" set `from`.
 * - A price after "was", "statt", "UVP", "au lieu de", "De" (pt), "通常価格", an auction's
 *   "Estimate" or "Starting bid"... is an old price and ignored (a label before a range covers
 *   both ends); a price after "now", "jetzt", "por", "teraz", "Current bid"... is the current
 *   one. A text holding only an old price reads as it, marked `old` (no source records it).
 * - A price said to be without VAT ("exkl. MwSt.", "HT", "brez DDV", "cena netto") gives way
 *   to another price in the text: the consumer's; alone, it reads marked `exTax`.
 *   If several prices remain and nothing says which is current, parsing fails rather than guessing.
 * - Negative amounts and amounts beyond 99 999 999 999.9999 or with more than 4 decimal places
 *   are refused; zero is returned as "0" (callers decide whether a zero price means anything),
 *   but a zero current price next to an old price is refused.
 */
import { compareDecimals, isZeroDecimal, makeDecimal } from '../money/decimal.js';
import {
  MARKER_ANYWHERE,
  MARKER_AT_END,
  MARKER_AT_START,
  resolveMarker,
  soleCodeIn,
  type ResolvedMarker,
} from './currency.js';
import { minorDigits, normaliseCurrencyCode } from '../money/currency.js';
import {
  EX_TAX_AFTER,
  EX_TAX_BEFORE,
  FREE_TEXT,
  FROM_AFTER,
  INSTALMENT_BEFORE,
  MULTIBUY_BEFORE,
  MULTIPLIER_AFTER,
  OLD_AFTER,
  PER_CJK_BEFORE,
  PIECE_AFTER,
  RANGE_GAP,
  SAVE_AFTER,
  SAVE_CJK_BEFORE,
  UNIT_AFTER,
  UNIT_BEFORE,
  periodAfter,
  roleFromGap,
  type Period,
} from './price-words.js';
import { localeDecimal, readNumber } from './read-number.js';

export interface PriceHints {
  /** The page's or listing's currency: settles '$', '¥', '£', 'kr', 'Rs' and "1,299"-style ambiguity. */
  currency?: string;
  /** A BCP 47 locale ("de-DE"); its decimal separator settles "1,299" / "1.299". */
  locale?: string;
  /** The decimal separator to assume for "1,299" / "1.299" (beats `locale`); structured data uses '.'. */
  decimal?: '.' | ',';
}

export interface ParsedPrice {
  ok: true;
  /** Exact decimal string, e.g. "1299.00", "12", "0.5". */
  amount: string;
  /** ISO 4217 code, when the text carries a symbol or code that settles it. */
  currency?: string;
  /** The symbol or code as written ("$", "kr", "EUR"). */
  currencyText?: string;
  /** The text is a range: `amount` is `low`. */
  range?: { low: string; high: string };
  /** The text gives a starting price only ("From $9.99"). */
  from?: boolean;
  /** The price is charged per period ("$9.99/mo"). */
  period?: Period;
  /**
   * The text holds only an old price ("běžná cena 590 Kč", "UVP 12,99 €"): `amount` is that old
   * price, and the first note says so. Not a price to record: extraction sources refuse it.
   */
  old?: true;
  /** The price is marked as without VAT ("24,71 € exkl. MwSt.", "Prix HT") and the text shows no other. */
  exTax?: true;
  /** What the parser ignored or could not settle, for a user reading the result. */
  notes: string[];
}

export interface PriceParseFailure {
  ok: false;
  reason: string;
}

export type PriceParseResult = ParsedPrice | PriceParseFailure;

const MAX_TEXT = 300;

/** NFKC folds full-width digits and currency signs; every kind of space becomes ' '. */
export function normalisePriceText(text: string): string {
  return (
    text
      .normalize('NFKC')
      // Arabic-Indic and Persian digits ("۵۵,۰۰۰ تومان") and the Arabic separators.
      .replace(/[\u0660-\u0669\u06f0-\u06f9]/g, (d) => String((d.charCodeAt(0) - 0x0660) % 0x90))
      .replace(/\u066b/g, '.')
      .replace(/\u066c/g, ',')
      .replace(/[\u200b-\u200f\u2060\ufeff\u202a-\u202e\u2066-\u2069\u00ad]/g, '')
      .replace(/[\u2212\u2012\u2010\u2011]/g, '-')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** A number: digits grouped by '.', ',', apostrophes or spaces before three digits, maybe ",-"; or ".99". */
const NUMBER =
  /\d+(?:(?:[.,'’ʼ]| (?=\d{3}(?!\d)))\d+)*(?:[.,](?:--?|–|—)(?![\d]))?|(?<![\p{L}\d.,])[.,]\d{2}(?![\d]|[.,]\d)/gu;

interface Token {
  start: number;
  end: number;
  raw: string;
  /** ",-" / ".–" after the number: every separator in it groups thousands. */
  dash?: boolean;
  /** Cents written apart after the currency ("35€ 99"). */
  cents?: string;
  /** Joined over a space after the decimal separator ("1.837, 32 €"). */
  spaced?: boolean;
  prefix?: string;
  suffix?: string;
  /** Characters of the following gap consumed by `suffix`. */
  suffixLen: number;
  /** Characters of the preceding gap consumed by `prefix`. */
  prefixLen: number;
  negative: boolean;
  parenthesised: boolean;
  amount?: string;
  currency?: string;
  currencyText?: string;
  ambiguous?: readonly string[];
  scale?: number;
  invalid?: string;
  kind: 'price' | 'bare' | 'drop';
  dropWhy?: 'unit' | 'save' | 'percent' | 'glued' | 'instalment' | 'multibuy';
  role?: 'old' | 'current' | 'from';
  period?: Period;
  /** Said to be without VAT: dropped when the text shows another price ("29,66 € inkl. MwSt., 24,71 € netto"). */
  exTax?: boolean;
}

function drop(t: Token, why: NonNullable<Token['dropWhy']>): void {
  t.kind = 'drop';
  t.dropWhy = why;
}

function describe(text: string, t: Token): string {
  return text.slice(t.start - t.prefixLen, t.end + t.suffixLen).trim();
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(NUMBER)) {
    let raw = m[0];
    const d = /([.,])(?:--?|–|—)$/.exec(raw);
    if (d) raw = raw.slice(0, d.index);
    const t: Token = {
      start: m.index,
      end: m.index + m[0].length,
      raw,
      suffixLen: 0,
      prefixLen: 0,
      negative: false,
      parenthesised: false,
      kind: 'bare',
    };
    if (d) t.dash = true;
    // "$..75", "$.750.30": a separator with no digit before it makes the number unreadable.
    if (/[.,]/.test(text[t.start - 1] ?? '') && !/\d/.test(text[t.start - 2] ?? ''))
      t.invalid = `"${text}" is not a well-formed number`;
    const prev = tokens[tokens.length - 1];
    // "1.837, 32 €", "$ 8. 94": a space after the decimal separator.
    if (
      prev &&
      !prev.dash &&
      !prev.invalid &&
      /^\d{2}$/.test(raw) &&
      /^[.,] $/.test(text.slice(prev.end, t.start)) &&
      !/[.,]\d{1,2}$/.test(prev.raw) &&
      !/^[.,]?\d/.test(text.slice(t.end))
    ) {
      prev.raw = `${prev.raw}${text[prev.end]}${raw}`;
      prev.end = t.end;
      prev.spaced = true;
      continue;
    }
    tokens.push(t);
  }
  return tokens;
}

/** The markers around each number; a number with a prefix marker takes no suffix sign, so "$20 $15" pairs up. */
function markCurrencies(text: string, tokens: Token[], hints: Array<string | undefined>): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    const gapBefore = text.slice(prev ? prev.end + prev.suffixLen : 0, t.start);
    const pm = MARKER_AT_END.exec(gapBefore);
    let resolved: ResolvedMarker | undefined;
    if (pm?.[1] && (resolved = resolveMarker(pm[1], ...hints))) {
      t.prefix = pm[1];
      t.prefixLen = gapBefore.length - pm.index;
    }
    const next = tokens[i + 1];
    const gapAfter = text.slice(t.end, next ? next.start : text.length);
    const sm = MARKER_AT_START.exec(gapAfter);
    const after = sm?.[1] ? resolveMarker(sm[1], ...hints) : undefined;
    // "$1,299.00 USD": a code after a prefixed number only when it agrees with the prefix and
    // is not the next number's own prefix ("CHF 1'499.– CHF 1'299.–").
    const agrees =
      !t.prefix ||
      (/^[A-Z]{3}$/.test(sm?.[1] ?? '') &&
        after?.currency !== undefined &&
        after.currency === resolved?.currency &&
        (!next || MARKER_AT_END.test(gapAfter.slice(sm?.[0].length))));
    if (sm?.[1] && after && agrees) {
      t.suffix = sm[1];
      t.suffixLen = sm[0].length;
      resolved ??= after;
    }
    if (resolved) {
      t.currencyText = t.prefix ?? t.suffix;
      t.currency = resolved.currency;
      t.ambiguous = resolved.ambiguous;
      t.scale = resolved.scale;
      t.kind = 'price';
    }
    if (t.spaced && !resolved)
      t.invalid = `"${describe(text, t)}" could be one price with a space after its decimal separator or two numbers`;
    // A minus right before the number (or its sign) negates it, unless it only separates this
    // number from the previous one ("10 - $20").
    const before = gapBefore.slice(0, gapBefore.length - t.prefixLen);
    const afterSign = t.prefix ? gapBefore.slice(gapBefore.length - t.prefixLen + t.prefix.length) : '';
    const minus = /-\s*$/.test(before) || /^\s*-/.test(afterSign);
    const rest = before.replace(/-\s*$/, '').trim();
    // "Mevzun Pro - ₺1.500": a spaced dash after a label separates it from the price.
    const labelDash = /\p{L}\s+-\s+$/u.test(before) && !/^\s*-/.test(afterSign);
    t.negative = minus && !labelDash && (i === 0 || rest !== '' || /^\s*-/.test(afterSign));
    t.parenthesised =
      (text.slice(0, t.start).match(/\(/g) ?? []).length > (text.slice(0, t.start).match(/\)/g) ?? []).length;
  }
}

/**
 * "制作费用：¥100": '¥' is the yen by default, but beside Chinese text (Han characters and no kana)
 * it is as likely the yuan; unless the page or the text names one, the currency stays open.
 */
function chineseYen(text: string, tokens: Token[], hints: Array<string | undefined>): void {
  if (hints.some((h) => h === 'JPY' || h === 'CNY')) return;
  if (!/\p{Script=Han}/u.test(text) || /[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return;
  for (const t of tokens) {
    if (t.currencyText !== '¥' || t.currency !== 'JPY') continue;
    t.currency = undefined;
    t.ambiguous = ['JPY', 'CNY'];
  }
}

/** "35€ 99", "35€99": whole units, the currency, then the cents on their own. */
function joinApartCents(text: string, tokens: Token[]): void {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const t = tokens[i] as Token;
    const n = tokens[i + 1] as Token;
    if (!t.suffix || t.prefix || t.dash || t.spaced || /[.,]\d{1,2}$/.test(t.raw)) continue;
    if (n.prefix || n.suffix || !/^\d{2}$/.test(n.raw) || !/^ ?$/.test(text.slice(t.end + t.suffixLen, n.start)))
      continue;
    if (!/^(?:$|[ *)])/.test(text.slice(n.end)) || /^\s*[%/]/.test(text.slice(n.end))) continue;
    t.cents = n.raw;
    t.end = n.end;
    t.suffixLen = 0;
    tokens.splice(i + 1, 1);
  }
}

/** What each number is, from the text around it: old, current or starting price, or dropped. */
function classify(text: string, tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    const gapBefore = text.slice(prev ? prev.end + prev.suffixLen : 0, t.start - t.prefixLen);
    const rest = text.slice(t.end + t.suffixLen);
    const textBefore = text.slice(0, t.start - t.prefixLen);
    const charBefore = text[t.start - 1] ?? ' ';
    const charAfter = text[t.end] ?? ' ';
    const role = roleFromGap(gapBefore);
    if (/^\s*%/.test(rest)) drop(t, 'percent');
    else if ((!t.prefix && /[\p{L}]/u.test(charBefore)) || (!t.suffix && /[\p{L}]/u.test(charAfter))) drop(t, 'glued');
    else if (
      !PIECE_AFTER.test(rest) &&
      !(t.period = periodAfter(rest)) &&
      (UNIT_AFTER.test(rest) || UNIT_BEFORE.test(gapBefore))
    )
      drop(t, 'unit');
    else if (PER_CJK_BEFORE.test(gapBefore)) drop(t, 'unit');
    else if (role === 'save' || SAVE_AFTER.test(rest) || SAVE_CJK_BEFORE.test(gapBefore)) drop(t, 'save');
    else if (INSTALMENT_BEFORE.test(textBefore)) drop(t, 'instalment');
    else if (MULTIBUY_BEFORE.test(textBefore)) drop(t, 'multibuy');
    if (t.kind === 'drop') continue;
    const multiplier = MULTIPLIER_AFTER.exec(rest);
    if (multiplier)
      t.invalid = `"${describe(text, t)}${multiplier[0]}" is scaled by a word ("${multiplier[0].trim()}"); pin a selector on the figure itself`;
    t.role = role === 'save' ? undefined : role;
    if (OLD_AFTER.test(rest)) t.role = 'old';
    else if (FROM_AFTER.test(rest) && t.role === undefined) t.role = 'from';
    // "24,71 € HT 29,66 € TTC": the words after one price are not the label of the next.
    const exAfter = EX_TAX_AFTER.exec(rest);
    const claimed = prev?.exTax && EX_TAX_AFTER.exec(text.slice(prev.end + prev.suffixLen))?.[0].length;
    if (exAfter || EX_TAX_BEFORE.test(claimed ? gapBefore.slice(claimed) : gapBefore)) t.exTax = true;
  }
  // "Schätzpreis 1.200 € – 1.800 €", "Was $20 - $30": the label before a range covers both ends.
  for (let i = 1; i < tokens.length; i++) {
    const a = tokens[i - 1] as Token;
    const b = tokens[i] as Token;
    if (
      a.role === 'old' &&
      b.role === undefined &&
      b.kind !== 'drop' &&
      RANGE_GAP.test(text.slice(a.end + a.suffixLen, b.start - b.prefixLen))
    )
      b.role = 'old';
  }
  // "HK$ 20,000 - 35,000 / 呎": the unit after a range's high end is the low end's unit too.
  for (let i = tokens.length - 1; i > 0; i--) {
    const a = tokens[i - 1] as Token;
    const b = tokens[i] as Token;
    if (
      b.dropWhy === 'unit' &&
      a.kind !== 'drop' &&
      RANGE_GAP.test(text.slice(a.end + a.suffixLen, b.start - b.prefixLen))
    )
      drop(a, 'unit');
  }
}

/** "10 – 20 €", "od 10 do 20 zł", "$10 - 20": the bare end of a range shares the other end's currency. */
function shareRangeCurrency(text: string, tokens: Token[]): void {
  const undropped = tokens.filter((t) => t.kind !== 'drop');
  for (let i = 0; i + 1 < undropped.length; i++) {
    const a = undropped[i] as Token;
    const b = undropped[i + 1] as Token;
    if ((a.kind === 'price') === (b.kind === 'price')) continue;
    if (!RANGE_GAP.test(text.slice(a.end + a.suffixLen, b.start - b.prefixLen))) continue;
    const [bare, priced] = a.kind === 'price' ? [b, a] : [a, b];
    // The shared sign sits outside the pair: "$10 - 20" or "10 - 20 €", not "Size 10 - $20".
    if (bare === a ? !priced.suffix : !priced.prefix) continue;
    Object.assign(bare, {
      kind: 'price',
      currency: priced.currency,
      currencyText: priced.currencyText,
      ambiguous: priced.ambiguous,
      scale: priced.scale,
    });
  }
}

/** Decimal places of a token's currency; for a shared sign ('kr'), when all its currencies agree on fewer than three or on three. */
function minorOf(t: Token, hint: string | undefined): number | undefined {
  const currency = t.currency ?? (t.ambiguous ? undefined : hint);
  if (currency) return minorDigits(currency);
  const minors = (t.ambiguous ?? []).map((c) => minorDigits(c) ?? 2);
  if (minors.length && minors.every((m) => m < 3)) return 2;
  if (minors.length && minors.every((m) => m === 3)) return 3;
  return undefined;
}

/** Reads each kept number with its currency's rules into `amount`, or says why in `invalid`. */
function readAmounts(text: string, kept: Token[], hint: string | undefined, decimal: '.' | ',' | undefined): void {
  for (const t of kept) {
    if (t.invalid) continue;
    const n = readNumber(t.raw, { dash: t.dash, cents: t.cents, minor: minorOf(t, hint), decimal });
    if ('reason' in n) {
      t.invalid = n.reason;
      continue;
    }
    let { int, frac } = n;
    if (t.scale) {
      int = (int + frac.slice(0, t.scale).padEnd(t.scale, '0')).replace(/^0+(?=\d)/, '');
      frac = frac.slice(t.scale);
    }
    const dec = makeDecimal(int, frac);
    if (!dec.ok) t.invalid = `"${describe(text, t)}" ${dec.reason}`;
    else t.amount = dec.value;
  }
}

const DROP_WHAT: Readonly<Record<NonNullable<Token['dropWhy']>, string>> = {
  unit: 'a unit price',
  save: 'a saving',
  percent: 'a percentage',
  instalment: 'an instalment',
  multibuy: 'a multi-buy offer',
  glued: 'a quantity or model number',
};

type Item = { t: Token; high?: Token };

/** Ranges: two prices joined by a dash or "to". */
function pairRanges(text: string, readable: Token[]): Item[] {
  const items: Item[] = [];
  for (let i = 0; i < readable.length; i++) {
    const a = readable[i] as Token;
    const b = readable[i + 1];
    if (b && a.role !== 'old' && b.role !== 'old') {
      const gap = text.slice(a.end + a.suffixLen, b.start - b.prefixLen);
      if (RANGE_GAP.test(gap) && compareDecimals(a.amount as string, b.amount as string) <= 0) {
        items.push({ t: a, high: b });
        b.negative = false;
        i++;
        continue;
      }
    }
    items.push({ t: a });
  }
  return items;
}

/**
 * Parses one price text. `hints.currency` is the page's currency (from structured data or the
 * listing), used to read '$', '¥', 'kr' and to settle "1,299"; it does not become the result's
 * currency unless the text carries a matching symbol.
 */
export function parsePrice(input: string, hints: PriceHints = {}): PriceParseResult {
  const text = normalisePriceText(input ?? '');
  if (text === '') return { ok: false, reason: 'the text is empty' };
  if (text.length > MAX_TEXT) {
    return { ok: false, reason: `the text is ${text.length} characters long, too long to be a single price` };
  }
  const hint = normaliseCurrencyCode(hints.currency);
  const decimalHint = hints.decimal ?? (hints.locale ? localeDecimal(hints.locale) : undefined);

  const tokens = tokenize(text);
  if (tokens.length === 0) {
    return FREE_TEXT.test(text)
      ? { ok: true, amount: '0', notes: [`"${text}" says it is free`] }
      : { ok: false, reason: `"${text}" holds no number` };
  }
  const currencyHints = [soleCodeIn(text, hint), hint];
  markCurrencies(text, tokens, currencyHints);
  chineseYen(text, tokens, currencyHints);
  joinApartCents(text, tokens);
  classify(text, tokens);
  shareRangeCurrency(text, tokens);

  // Once any number carries a currency, bare numbers are quantities or model numbers.
  const marked = tokens.some((t) => t.currencyText !== undefined);
  let kept = tokens.filter((t) => t.kind === (marked ? 'price' : 'bare'));
  if (kept.length === 0) {
    const why = tokens.find((t) => t.dropWhy && (!marked || t.currencyText))?.dropWhy;
    return { ok: false, reason: `"${text}" holds no price, only ${DROP_WHAT[why ?? 'glued']}` };
  }
  if (kept.some((t) => !t.parenthesised)) kept = kept.filter((t) => !t.parenthesised);
  // "29,66 € inkl. MwSt. (24,71 € netto)": the consumer price, not the one without VAT.
  if (kept.some((t) => !t.exTax)) kept = kept.filter((t) => !t.exTax);

  readAmounts(text, kept, hint, decimalHint);
  const readable = kept.filter((t) => t.amount !== undefined);
  if (readable.length === 0)
    return { ok: false, reason: kept.find((t) => t.invalid)?.invalid ?? `"${text}" holds no readable number` };
  const unreadable = kept.find((t) => t.invalid);
  if (unreadable) return { ok: false, reason: unreadable.invalid as string };

  const items = pairRanges(text, readable);
  const old = items.filter((x) => x.t.role === 'old');
  let live = items.filter((x) => x.t.role !== 'old');
  const oldText = (): string => old.map((x) => describe(text, x.t)).join(', ');
  if (live.length === 0) {
    // One old price ("běžná cena 590 Kč"): its amount, marked old, for the caller to refuse.
    const only = old[0] as Item;
    const oneOld = old.every((x) => !x.high && compareDecimals(x.t.amount as string, only.t.amount as string) === 0);
    if (!oneOld || only.high || only.t.negative)
      return { ok: false, reason: `"${text}" holds only an old price (${oldText()})` };
    live = [only];
  }
  if (live.length > 1) {
    const current = live.filter((x) => x.t.role === 'current');
    const first = live[0] as Item;
    const same = live.every(
      (x) =>
        !x.high &&
        x.t.currency === first.t.currency &&
        compareDecimals(x.t.amount as string, first.t.amount as string) === 0,
    );
    if (current.length === 1) live = current;
    else if (same) live = [first];
    else {
      return {
        ok: false,
        reason: `"${text}" holds several prices (${live.map((x) => describe(text, x.t)).join(', ')}) and nothing says which is current`,
      };
    }
  }
  const pick = live[0] as Item;
  const t = pick.t;
  if (t.negative) return { ok: false, reason: `"${text}" is a negative amount` };
  if (old.length && t.role !== 'old' && isZeroDecimal(t.amount as string)) {
    return {
      ok: false,
      reason: `"${text}" has a zero current price beside the old price ${oldText()}: a placeholder, not a price`,
    };
  }
  const notes: string[] = [];
  const onlyOld = t.role === 'old';
  if (onlyOld) notes.push(`"${text}" holds only an old price (${oldText()})`);
  else if (old.length) notes.push(`ignored the old price ${oldText()}`);
  if (t.exTax) notes.push(`"${describe(text, t)}" is the price without VAT`);

  let currency = t.currency ?? pick.high?.currency;
  let currencyText = t.currencyText ?? pick.high?.currencyText;
  let ambiguous = t.ambiguous ?? pick.high?.ambiguous;
  if (!currencyText) {
    // A single currency named elsewhere in the text ("Preis in EUR: 12,99").
    const named = new Map<string, string>();
    for (const m of text.matchAll(MARKER_ANYWHERE)) {
      const r = resolveMarker(m[0], hint);
      if (r?.currency && !r.scale) named.set(r.currency, m[0]);
    }
    if (named.size === 1) {
      const [code, written] = [...named.entries()][0] as [string, string];
      currency = code;
      currencyText = written;
      ambiguous = undefined;
    }
  }
  if (ambiguous && !currency) {
    notes.push(`"${currencyText}" is used by ${ambiguous.join(', ')}; set the listing's currency to say which`);
  }
  if (t.scale && currency)
    notes.push(`"${currencyText}" counts ${10 ** t.scale} ${currency}: read as ${t.amount} ${currency}`);
  const result: ParsedPrice = { ok: true, amount: t.amount as string, notes };
  if (currency) result.currency = currency;
  if (currencyText) result.currencyText = currencyText;
  if (pick.high) result.range = { low: t.amount as string, high: pick.high.amount as string };
  if (t.role === 'from') result.from = true;
  if (onlyOld) result.old = true;
  if (t.exTax) result.exTax = true;
  const period = t.period ?? pick.high?.period;
  if (period) result.period = period;
  return result;
}
