/**
 * The price-string evaluation: our corpus (test/fixtures/price-strings/corpus.json) and the
 * 555 strings of Zyte's price-parser test suite, read where they lie in the shared folder
 * beside the checkout (../shared/data/price-strings/, never copied here). Each string is
 * scored right (the expected amount and currency, or the expected refusal), refused (we gave
 * no number where one was expected: a shortfall, never a wrong number) or wrong (a different
 * amount, a different currency, or a number where none should be read).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePrice, type PriceHints, type PriceParseResult } from '../../../src/extraction/index.js';
import { compareDecimals } from '../../../src/money/decimal.js';
import { CHECKOUT } from '../../helpers/checkout.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS_FILE = path.join(ROOT, 'test/fixtures/price-strings/corpus.json');
export const SHARED_DIR = path.resolve(CHECKOUT, '../shared/data/price-strings');
export const SHARED_FILE = path.join(SHARED_DIR, 'price-parser-examples.json');

export type Outcome = 'right' | 'refused' | 'wrong';

export interface Expectation {
  /** The amount a person reads; null when the text must be refused. */
  amount: string | null;
  /** ISO codes the result's currency may be; [] when it must have none; undefined when any (or none) will do. */
  currencies?: readonly string[];
  /** A result without currency is right too (the text names none, only text near it did). */
  currencyOptional?: boolean;
  /** The amount is in tomans: a result in IRR (rials) is ten times it. */
  toman?: boolean;
}

export interface Scored {
  text: string;
  outcome: Outcome;
  got: string;
}

export function judge(expected: Expectation, r: PriceParseResult): Outcome {
  if (!r.ok) return expected.amount === null ? 'right' : 'refused';
  if (expected.amount === null) return 'wrong';
  const amount = expected.toman && r.currency === 'IRR' ? `${expected.amount}0` : expected.amount;
  if (compareDecimals(r.amount, amount) !== 0) return 'wrong';
  const allowed = expected.currencies;
  if (allowed === undefined) return 'right';
  if (r.currency === undefined && expected.currencyOptional) return 'right';
  if (allowed.length === 0) return r.currency === undefined ? 'right' : 'wrong';
  return r.currency !== undefined && allowed.includes(r.currency)
    ? 'right'
    : r.currency === undefined
      ? 'refused'
      : 'wrong';
}

export function score(cases: Array<{ text: string; expected: Expectation; hints?: PriceHints }>): Scored[] {
  return cases.map(({ text, expected, hints }) => {
    const r = parsePrice(text, hints);
    return {
      text,
      outcome: judge(expected, r),
      got: r.ok ? `${r.amount} ${r.currency ?? '(no currency)'}` : `refused: ${r.reason}`,
    };
  });
}

export function tally(rows: Scored[]): Record<Outcome, number> {
  const t: Record<Outcome, number> = { right: 0, refused: 0, wrong: 0 };
  for (const r of rows) t[r.outcome]++;
  return t;
}

export interface CorpusEntry {
  text: string;
  /** BCP 47 language of the page the string was taken from. */
  lang: string;
  amount: string | null;
  /** ISO 4217; null when the text names no currency a person could tell. */
  currency: string | null;
  /** Where the string was seen: a page URL, or "gh:<id>" for a file of a public GitHub repository (see README.md). */
  source: string;
  hints?: PriceHints;
}

export function corpus(): CorpusEntry[] {
  return JSON.parse(fs.readFileSync(CORPUS_FILE, 'utf8')) as CorpusEntry[];
}

export function corpusCases(
  entries: CorpusEntry[],
): Array<{ text: string; expected: Expectation; hints?: PriceHints }> {
  return entries.map((e) => ({
    text: e.text,
    hints: e.hints,
    expected: { amount: e.amount, currencies: e.amount === null ? undefined : e.currency ? [e.currency] : [] },
  }));
}

interface SharedRow {
  text: string | null;
  currency_hint: string | null;
  amount: string | null;
  currency_text: string | null;
}

const DOLLARS = ['USD', 'CAD', 'AUD', 'NZD', 'SGD', 'HKD', 'MXN'];
/**
 * What price-parser's `currency_text` can mean as ISO codes. A sign we resolve to a code outside
 * its list is a wrong currency. The toman (تومان) is 10 rials: we report IRR and ten times the
 * amount, which is the same price; the harness compares an IRR result with ten times it.
 */
const SHARED_CURRENCY: Readonly<Record<string, readonly string[]>> = {
  '€': ['EUR'],
  EUR: ['EUR'],
  euro: ['EUR'],
  $: DOLLARS,
  US$: ['USD'],
  A$: ['AUD'],
  NZD: ['NZD'],
  Kč: ['CZK'],
  '£': ['GBP'],
  GBP: ['GBP'],
  zł: ['PLN'],
  PLN: ['PLN'],
  pln: ['PLN'],
  'руб.': ['RUB', 'BYN'],
  руб: ['RUB', 'BYN'],
  Р: ['RUB', 'BYN'],
  'р.': ['RUB', 'BYN'],
  'грн.': ['UAH'],
  грн: ['UAH'],
  DKK: ['DKK'],
  lei: ['RON', 'MDL'],
  LEI: ['RON', 'MDL'],
  Lei: ['RON', 'MDL'],
  Rp: ['IDR'],
  '₫': ['VND'],
  đ: ['VND'],
  kr: ['SEK', 'NOK', 'DKK', 'ISK'],
  CHF: ['CHF'],
  'Fr.': ['CHF'],
  'лв.': ['BGN'],
  KD: ['KWD'],
  OMR: ['OMR'],
  PTE: ['PTE'],
  DEM: ['DEM'],
  AED: ['AED'],
  원: ['KRW'],
  円: ['JPY'],
  جنيه: ['EGP', 'SDG'],
  درهم: ['AED', 'MAD'],
  ريال: ['SAR', 'QAR', 'OMR', 'YER', 'IRR'],
  R$: ['BRL'],
  '₪': ['ILS'],
  '฿': ['THB'],
  HUF: ['HUF'],
  Ft: ['HUF'],
  Dinara: ['RSD'],
  Br: ['BYN', 'ETB'],
  TL: ['TRY'],
  تومان: ['IRR'],
  '₤': [],
  '₶': [],
};

export function sharedRows(): SharedRow[] | undefined {
  if (!fs.existsSync(SHARED_FILE)) return undefined;
  return JSON.parse(fs.readFileSync(SHARED_FILE, 'utf8')) as SharedRow[];
}

/**
 * price-parser's strings are read without hints: its `currency_hint` is nearby text, not the
 * page's currency, so its `currency_text` may come from that text alone and a result without
 * currency is not held against us; a result with another currency is wrong.
 */
export function sharedCases(rows: SharedRow[]): Array<{ text: string; expected: Expectation }> {
  return rows.map((row) => {
    const text = row.text ?? '';
    const toman = row.currency_text === 'تومان';
    const currencies = row.currency_text === null ? [] : (SHARED_CURRENCY[row.currency_text] ?? []);
    const known = currencies.length > 0 || row.currency_text === null;
    return {
      text,
      expected: { amount: row.amount, currencies: known ? currencies : undefined, currencyOptional: true, toman },
    };
  });
}
