/**
 * Locale-aware parsing of a price as shops write it, into an exact decimal string and, when the
 * text names it, an ISO 4217 currency.
 *
 * Numbers
 * - Apostrophes (’ ') and spaces (incl. NBSP and narrow NBSP) only ever group thousands.
 * - With both '.' and ',' present the rightmost is the decimal separator: "1.299,00", "1,299.00".
 * - One separator occurring several times groups thousands: "1.299.000", Indian "1,29,999".
 * - One separator occurring once: followed by 1, 2 or 4 digits it is decimal ("1,29", "12.5").
 *   Followed by exactly 3 digits ("1,299", "1.299") it is ambiguous and decided by, in order:
 *   a currency without minor unit (JPY, KRW...) -> thousands; an explicit `decimal` or `locale`
 *   hint -> as that locale writes; a currency with 3 decimals (KWD, BHD...) -> decimal; an
 *   integer part of 0 ("0,299") or of more than 3 digits -> decimal; otherwise thousands, since
 *   prices in two-decimal currencies don't have three decimals.
 * - ",-", ".-", ".–" after the number mean "no cents": "12,-" -> 12, "CHF 1'299.–" -> 1299.
 * - Superscript cents must be joined by the caller ("$12<sup>99</sup>"); extraction does so.
 *
 * Several numbers in one text
 * - Numbers with a currency marker beat bare numbers (quantities, model numbers, "128GB").
 * - Dropped: percentages, unit prices ("4,99 €/kg", "1 kg = 4,99 €", "($0.50/oz)" when another
 *   price stands outside parentheses), savings ("Save $5", "Sie sparen 3 €"), instalments
 *   ("10x de R$ 26,00").
 * - Two prices joined by "-", "–", "to", "bis", "à", "do"... are a range: amount is the low bound
 *   and `range` says so. "From $9.99", "ab 9,99 €", "à partir de" set `from`.
 * - A price after "was", "statt", "UVP", "au lieu de", "De" (pt), "通常価格"... is an old price
 *   and ignored; a price after "now", "jetzt", "por", "teraz"... is the current one. If several
 *   prices remain and nothing says which is current, parsing fails rather than guessing.
 * - Negative amounts and amounts beyond 99 999 999 999.9999 or with more than 4 decimal places
 *   are refused; zero is returned as "0" (callers decide whether a zero price means anything).
 */
import { makeDecimal, compareDecimals } from '../money/decimal.js';
import { MARKER_ANYWHERE, MARKER_AT_END, MARKER_AT_START, resolveMarker } from './currency.js';
import { minorDigits, normaliseCurrencyCode } from '../money/currency.js';

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
  return text
    .normalize('NFKC')
    .replace(/[\u200b-\u200f\u2060\ufeff\u202a-\u202e\u2066-\u2069\u00ad]/g, '')
    .replace(/[\u2212\u2012\u2010\u2011]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
}

const NUMBER = /\d+(?:(?:[.,'’ʼ]| (?=\d{3}(?!\d)))\d+)*(?:[.,](?:--?|–|—)(?![\d]))?|(?<![\p{L}\d])[.,]\d{2}(?!\d)/gu;

const W = (words: string): string => `(?<![\\p{L}])(?:${words})(?![\\p{L}])`;
const OLD_WORDS = W(
  [
    'was', 'were', 'regular price', 'regular', 'reg\\.?', 'original price was', 'original price', 'orig\\.?', 'list price',
    'before', 'previously', 'compare at', 'rrp', 'msrp', 'srp', 'uvp', 'statt', 'vorher', 'bisher', 'ursprünglich',
    'streichpreis', 'avant', 'au lieu de', 'prix barré', 'prix initial', 'antes', 'precio anterior', 'de', 'era',
    'zamiast', 'poprzednio', 'przed', 'cena regularna', 'cena katalogowa', 'van', 'oude prijs',
    '通常価格', '定価', '参考価格', 'メーカー希望小売価格', '元の価格',
  ].join('|'),
);
const CURRENT_WORDS = W(
  [
    'now', 'sale price', 'sale', 'our price', 'your price', 'price now', 'special price', 'offer price', 'deal',
    'current price is', 'current price', 'jetzt', 'nur', 'aktionspreis', 'angebot', 'sonderpreis', 'maintenant',
    'prix promo', 'promo', 'désormais', 'ahora', 'oferta', 'por', 'agora', 'teraz', 'promocja', 'cena promocyjna',
    'nu', 'voor', 'ora', '特価', 'セール価格', '販売価格',
  ].join('|'),
);
const FROM_BEFORE = W(
  ['from', 'starting at', 'starts at', 'as low as', 'ab', 'à partir de', 'dès', 'desde', 'a partir de', 'od', 'vanaf', 'da'].join(
    '|',
  ),
);
const FROM_AFTER = /^\s*(?:から|起|~|and up|\+)(?![\p{L}])/u;
const SAVE_BEFORE = W(
  [
    'save', 'you save', 'saving', 'savings', 'sie sparen', 'sparen sie', 'ersparnis', 'sparen', 'spare', 'économisez',
    'économie', 'ahorra', 'ahorras', 'ahorro', 'economize', 'economia', 'oszczędzasz', 'oszczędź', 'rabatt', 'discount',
  ].join('|'),
);
const SAVE_AFTER = /^\s*(?:off|rabatt|お得|割引)(?![\p{L}])/iu;
const OLD_AFTER = /^\s*\(?\s*(?:uvp|rrp|msrp)(?![\p{L}])/iu;
const UNIT_AFTER = /^\s*(?:\/\s*(?:\d+(?:[.,]\d+)?\s*)?\p{L}|per\s|pro\s|je\s|par\s|za\s|\/\s*m[²³23])/iu;
const UNIT_BEFORE = /=\s*$/;
const MULTIBUY_BEFORE = /(?<![\d.,'’ʼ])\d{1,3}\s*(?:for|für|pour|por|za)\s*$/iu;
const INSTALMENT_BEFORE = /(?:\d\s*x\s*(?:de|of)?\s*$|(?<![\p{L}])(?:parcelas?|cuotas?|instal(?:l)?ments?|raten?|monatlich|mensualités?)(?![\p{L}])[^\d]*$)/iu;
const RANGE_GAP = /^\s*(?:-|–|—|~|to|bis|à|a|até|do|až|–)\s*$/iu;

interface Token {
  start: number;
  end: number;
  raw: string;
  /** ",-" / ".–" after the number: the character before the dash is the decimal separator. */
  dash?: '.' | ',';
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
  invalid?: string;
  kind: 'price' | 'bare' | 'drop';
  dropWhy?: 'unit' | 'save' | 'percent' | 'glued' | 'instalment' | 'multibuy';
  role?: 'old' | 'current' | 'from';
}

const decimalByLocale = new Map<string, '.' | ',' | undefined>();
function localeDecimal(locale: string): '.' | ',' | undefined {
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

/** Splits a number token into integer and fraction digits, or says why it is not a number. */
function readNumber(raw: string, dash: '.' | ',' | undefined, currency: string | undefined, decimalHint: '.' | ',' | undefined):
  | { int: string; frac: string }
  | { reason: string } {
  if (/^[.,]\d{2}$/.test(raw)) return { int: '0', frac: raw.slice(1) };
  const separators = raw.replace(/\d/g, '');
  if (separators === '') return { int: raw, frac: '' };
  let decimal: string | undefined;
  if (dash) {
    decimal = undefined; // every separator before ",-" groups thousands
  } else {
    const dots = (raw.match(/\./g) ?? []).length;
    const commas = (raw.match(/,/g) ?? []).length;
    const otherGroups = /['’ʼ ]/.test(raw);
    if (dots && commas) {
      decimal = raw.lastIndexOf('.') > raw.lastIndexOf(',') ? '.' : ',';
    } else if (dots + commas === 1) {
      const ch = dots ? '.' : ',';
      const [intPart = '', after = ''] = raw.split(ch);
      const digitsBefore = intPart.replace(/\D/g, '');
      const minor = minorDigits(currency);
      if (otherGroups || after.length !== 3) decimal = ch;
      else if (minor === 0) decimal = undefined;
      else if (decimalHint) decimal = decimalHint === ch ? ch : undefined;
      else if (minor === 3) decimal = ch;
      else if (digitsBefore === '0' || digitsBefore.length > 3) decimal = ch;
      else decimal = undefined;
    }
  }
  let intPart = raw;
  let frac = '';
  if (decimal) {
    const at = raw.lastIndexOf(decimal);
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

const compiled = new Map<string, RegExp>();

function lastMatch(re: string, text: string): { index: number; text: string } | undefined {
  let g = compiled.get(re);
  if (!g) {
    g = new RegExp(re, 'giu');
    compiled.set(re, g);
  }
  g.lastIndex = 0;
  let last: RegExpExecArray | null = null;
  for (let m = g.exec(text); m; m = g.exec(text)) last = m;
  return last ? { index: last.index, text: last[0] } : undefined;
}

type GapRole = 'old' | 'current' | 'from' | 'save';

/** The role the nearest keyword before a number gives it ("was $20", "Save $5", "ab 9,99 €"). */
function roleFromGap(gap: string): GapRole | undefined {
  const lower = gap.toLowerCase();
  let best: { role: GapRole; end: number; length: number } | undefined;
  for (const [role, re] of [
    ['old', OLD_WORDS],
    ['current', CURRENT_WORDS],
    ['from', FROM_BEFORE],
    ['save', SAVE_BEFORE],
  ] as const) {
    const m = lastMatch(re, lower);
    // The keyword nearest the number wins; "à partir de" beats the "de" inside it.
    const end = m ? m.index + m.text.length : -1;
    if (m && (!best || end > best.end || (end === best.end && m.text.length > best.length))) {
      best = { role, end, length: m.text.length };
    }
  }
  return best?.role;
}

function drop(t: Token, why: NonNullable<Token['dropWhy']>): void {
  t.kind = 'drop';
  t.dropWhy = why;
}

function describe(text: string, t: Token): string {
  return text.slice(t.start - t.prefixLen, t.end + t.suffixLen).trim();
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

  const tokens: Token[] = [];
  for (const m of text.matchAll(NUMBER)) {
    let raw = m[0];
    let dash: Token['dash'];
    const d = /([.,])(?:--?|–|—)$/.exec(raw);
    if (d) {
      dash = d[1] as '.' | ',';
      raw = raw.slice(0, d.index);
    }
    tokens.push({
      start: m.index,
      end: m.index + m[0].length,
      raw,
      dash,
      suffixLen: 0,
      prefixLen: 0,
      negative: false,
      parenthesised: false,
      kind: 'bare',
    });
  }
  if (tokens.length === 0) return { ok: false, reason: `"${text}" holds no number` };

  // Currency markers next to each number: a number with a prefix marker takes no suffix marker,
  // so "$20 $15" and "20 € 15 €" both pair up correctly.
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    const gapBefore = text.slice(prev ? prev.end + prev.suffixLen : 0, t.start);
    const pm = MARKER_AT_END.exec(gapBefore);
    if (pm?.[1] && resolveMarker(pm[1], hint)) {
      t.prefix = pm[1];
      t.prefixLen = gapBefore.length - pm.index;
    }
    if (!t.prefix) {
      const next = tokens[i + 1];
      const gapAfter = text.slice(t.end, next ? next.start : text.length);
      const sm = MARKER_AT_START.exec(gapAfter);
      if (sm?.[1] && resolveMarker(sm[1], hint)) {
        t.suffix = sm[1];
        t.suffixLen = sm[0].length;
      }
    }
    const marker = t.prefix ?? t.suffix;
    if (marker) {
      const r = resolveMarker(marker, hint);
      t.currencyText = marker;
      t.currency = r?.currency;
      t.ambiguous = r?.ambiguous;
      t.kind = 'price';
    }
    // A minus right before the number (or its sign) negates it, unless it only separates this
    // number from the previous one ("10 - $20").
    const before = gapBefore.slice(0, gapBefore.length - t.prefixLen);
    const afterSign = t.prefix ? gapBefore.slice(gapBefore.length - t.prefixLen + t.prefix.length) : '';
    const minus = /-\s*$/.test(before) || /^\s*-/.test(afterSign);
    t.negative = minus && (i === 0 || before.replace(/-\s*$/, '').trim() !== '' || /^\s*-/.test(afterSign));
    t.parenthesised = (text.slice(0, t.start).match(/\(/g) ?? []).length > (text.slice(0, t.start).match(/\)/g) ?? []).length;
  }

  // What each number is, from the text around it.
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    const next = tokens[i + 1];
    const gapBefore = text.slice(prev ? prev.end + prev.suffixLen : 0, t.start - t.prefixLen);
    const after = text.slice(t.end + t.suffixLen, next ? next.start - next.prefixLen : text.length);
    const textBefore = text.slice(0, t.start - t.prefixLen);
    const charBefore = text[t.start - 1] ?? ' ';
    const charAfter = text[t.end] ?? ' ';
    const role = roleFromGap(gapBefore);
    if (/^\s*%/.test(after)) drop(t, 'percent');
    else if ((!t.prefix && /[\p{L}]/u.test(charBefore)) || (!t.suffix && /[\p{L}]/u.test(charAfter))) drop(t, 'glued');
    else if (UNIT_AFTER.test(after) || UNIT_BEFORE.test(gapBefore)) drop(t, 'unit');
    else if (role === 'save' || SAVE_AFTER.test(after)) drop(t, 'save');
    else if (INSTALMENT_BEFORE.test(textBefore)) drop(t, 'instalment');
    else if (MULTIBUY_BEFORE.test(textBefore)) drop(t, 'multibuy');
    if (t.kind === 'drop') continue;
    t.role = role === 'save' ? undefined : role;
    if (OLD_AFTER.test(after)) t.role = 'old';
    else if (FROM_AFTER.test(after) && t.role === undefined) t.role = 'from';
  }

  // "10 – 20 €", "od 10 do 20 zł", "$10 - 20": the bare end of a range shares the other end's currency.
  const undropped = tokens.filter((t) => t.kind !== 'drop');
  for (let i = 0; i + 1 < undropped.length; i++) {
    const a = undropped[i] as Token;
    const b = undropped[i + 1] as Token;
    if ((a.kind === 'price') === (b.kind === 'price')) continue;
    if (!RANGE_GAP.test(text.slice(a.end + a.suffixLen, b.start - b.prefixLen))) continue;
    const [bare, priced] = a.kind === 'price' ? [b, a] : [a, b];
    // The shared sign sits outside the pair: "$10 - 20" or "10 - 20 €", not "Size 10 - $20".
    if (bare === a ? !priced.suffix : !priced.prefix) continue;
    Object.assign(bare, { kind: 'price', currency: priced.currency, currencyText: priced.currencyText, ambiguous: priced.ambiguous });
  }

  // Once any number carries a currency, bare numbers are quantities or model numbers.
  const marked = tokens.some((t) => t.currencyText !== undefined);
  let kept = tokens.filter((t) => t.kind === (marked ? 'price' : 'bare'));
  if (kept.length === 0) {
    const why = tokens.find((t) => t.dropWhy && (!marked || t.currencyText))?.dropWhy;
    const what =
      why === 'unit' ? 'a unit price' : why === 'save' ? 'a saving' : why === 'percent' ? 'a percentage' : why === 'instalment'
                ? 'an instalment'
                : why === 'multibuy'
                  ? 'a multi-buy offer'
                  : 'a quantity or model number';
    return { ok: false, reason: `"${text}" holds no price, only ${what}` };
  }
  if (kept.some((t) => !t.parenthesised)) kept = kept.filter((t) => !t.parenthesised);

  // Read each remaining number with its currency's rules.
  const notes: string[] = [];
  for (const t of kept) {
    const currency = t.currency ?? (t.ambiguous ? undefined : hint);
    const n = readNumber(t.raw, t.dash, currency ?? hint, decimalHint);
    if ('reason' in n) {
      t.invalid = n.reason;
      continue;
    }
    const dec = makeDecimal(n.int, n.frac);
    if (!dec.ok) t.invalid = `"${describe(text, t)}" ${dec.reason}`;
    else t.amount = dec.value;
  }
  const readable = kept.filter((t) => t.amount !== undefined);
  if (readable.length === 0) return { ok: false, reason: kept[0]?.invalid ?? `"${text}" holds no readable number` };

  // Ranges: two prices joined by a dash or "to".
  type Item = { t: Token; high?: Token };
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

  const old = items.filter((x) => x.t.role === 'old');
  let live = items.filter((x) => x.t.role !== 'old');
  if (live.length === 0) {
    return { ok: false, reason: `"${text}" holds only an old price (${old.map((x) => describe(text, x.t)).join(', ')})` };
  }
  if (live.length > 1) {
    const current = live.filter((x) => x.t.role === 'current');
    const same = live.every(
      (x) => !x.high && x.t.currency === live[0]?.t.currency && compareDecimals(x.t.amount as string, live[0]?.t.amount as string) === 0,
    );
    if (current.length === 1) live = current;
    else if (same) live = [live[0] as Item];
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
  if (old.length) notes.push(`ignored the old price ${old.map((x) => describe(text, x.t)).join(', ')}`);

  let currency = t.currency ?? pick.high?.currency;
  let currencyText = t.currencyText ?? pick.high?.currencyText;
  let ambiguous = t.ambiguous ?? pick.high?.ambiguous;
  if (!currencyText) {
    // A single currency named elsewhere in the text ("Preis in EUR: 12,99").
    const named = new Map<string, string>();
    for (const m of text.matchAll(MARKER_ANYWHERE)) {
      const r = resolveMarker(m[0], hint);
      if (r?.currency) named.set(r.currency, m[0]);
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
  const result: ParsedPrice = { ok: true, amount: t.amount as string, notes };
  if (currency) result.currency = currency;
  if (currencyText) result.currencyText = currencyText;
  if (pick.high) result.range = { low: t.amount as string, high: pick.high.amount as string };
  if (t.role === 'from') result.from = true;
  return result;
}
