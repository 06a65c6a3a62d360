/**
 * Currency codes and the symbols shops write. A symbol maps to one ISO 4217 code by default;
 * symbols that several currencies share ('$', '¥', '£', 'kr', 'Rs') take the page's currency
 * instead when that currency is one of them, and 'kr' has no default at all (SEK, NOK, DKK and
 * ISK all use it), so it needs a hint.
 */

import { isIsoCode } from '../money/currency.js';

interface SymbolInfo {
  /** The code the symbol means when the page says nothing else; undefined when ambiguous. */
  default?: string;
  /** Currencies that also write this symbol; a hint among them wins over the default. */
  shared?: readonly string[];
}

const DOLLARS = [
  'USD', 'CAD', 'AUD', 'NZD', 'SGD', 'HKD', 'MXN', 'TWD', 'ARS', 'CLP', 'COP', 'UYU', 'BND', 'BSD', 'BBD', 'BZD',
  'BMD', 'KYD', 'FJD', 'GYD', 'JMD', 'LRD', 'NAD', 'SBD', 'SRD', 'TTD', 'XCD', 'DOP', 'CUP',
] as const;

/** Symbols and local abbreviations, matched case-sensitively. */
const SYMBOLS: Readonly<Record<string, SymbolInfo>> = {
  $: { default: 'USD', shared: DOLLARS },
  US$: { default: 'USD' },
  'U$S': { default: 'USD' },
  A$: { default: 'AUD' },
  AU$: { default: 'AUD' },
  C$: { default: 'CAD', shared: ['CAD', 'NIO'] },
  CA$: { default: 'CAD' },
  NZ$: { default: 'NZD' },
  HK$: { default: 'HKD' },
  S$: { default: 'SGD' },
  SG$: { default: 'SGD' },
  MX$: { default: 'MXN' },
  NT$: { default: 'TWD' },
  R$: { default: 'BRL' },
  '€': { default: 'EUR' },
  '£': { default: 'GBP', shared: ['GBP', 'EGP', 'GIP', 'FKP', 'SHP', 'LBP', 'SYP', 'SSP'] },
  '¥': { default: 'JPY', shared: ['JPY', 'CNY'] },
  '円': { default: 'JPY' },
  '元': { default: 'CNY' },
  RMB: { default: 'CNY' },
  'CN¥': { default: 'CNY' },
  '₹': { default: 'INR' },
  Rs: { default: 'INR', shared: ['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR'] },
  'Rs.': { default: 'INR', shared: ['INR', 'PKR', 'LKR', 'NPR', 'MUR', 'SCR'] },
  '₩': { default: 'KRW' },
  '원': { default: 'KRW' },
  '₽': { default: 'RUB' },
  'руб': { default: 'RUB' },
  'руб.': { default: 'RUB' },
  '₺': { default: 'TRY' },
  TL: { default: 'TRY' },
  '₪': { default: 'ILS' },
  '฿': { default: 'THB' },
  '₫': { default: 'VND' },
  '₱': { default: 'PHP' },
  '₴': { default: 'UAH' },
  'грн': { default: 'UAH' },
  'zł': { default: 'PLN' },
  'Kč': { default: 'CZK' },
  Ft: { default: 'HUF' },
  lei: { default: 'RON' },
  'лв': { default: 'BGN' },
  'лв.': { default: 'BGN' },
  kr: { shared: ['SEK', 'NOK', 'DKK', 'ISK'] },
  'kr.': { shared: ['DKK', 'SEK', 'NOK', 'ISK'] },
  Fr: { default: 'CHF' },
  'Fr.': { default: 'CHF' },
  'SFr.': { default: 'CHF' },
  RM: { default: 'MYR' },
  Rp: { default: 'IDR' },
  '₦': { default: 'NGN' },
  '₡': { default: 'CRC' },
  '₲': { default: 'PYG' },
  '₵': { default: 'GHS' },
  '₸': { default: 'KZT' },
  '₾': { default: 'GEL' },
  '₼': { default: 'AZN' },
};

/** Upper-case words that are ISO codes but far more often English words in shop text. */
const CODE_WORDS: ReadonlySet<string> = new Set(['ALL', 'TOP', 'CUP', 'BOB', 'TRY', 'SOS', 'MAD', 'PEN', 'MOP', 'GEL']);

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const symbolAlternatives = Object.keys(SYMBOLS)
  .sort((a, b) => b.length - a.length)
  .map((s) => (/^\p{L}/u.test(s) ? `(?<![\\p{L}])${escape(s)}` : escape(s)) + (/\p{L}$/u.test(s) ? '(?![\\p{L}])' : ''))
  .join('|');
const MARKER = `(?:(?<![\\p{L}])[A-Z]{3}(?![\\p{L}])|${symbolAlternatives})`;

/** A currency marker ending the text (before a number), e.g. "Preis: EUR " or "R$". */
export const MARKER_AT_END = new RegExp(`(${MARKER})\\s*$`, 'u');
/** A currency marker starting the text (after a number), e.g. " zł" or "€*". */
export const MARKER_AT_START = new RegExp(`^\\s*(${MARKER})`, 'u');
/** Every marker in a text. */
export const MARKER_ANYWHERE = new RegExp(MARKER, 'gu');

export interface ResolvedMarker {
  /** The ISO code, when the marker and the hint settle it. */
  currency?: string;
  /** Set when the marker is a currency sign but several currencies use it and no hint decided. */
  ambiguous?: readonly string[];
}

/**
 * What a marker means, or undefined when it is not a currency marker at all (an upper-case word
 * that is no ISO code, or a code-like English word such as "TOP").
 */
export function resolveMarker(marker: string, hint?: string): ResolvedMarker | undefined {
  const info = SYMBOLS[marker];
  if (info) {
    if (hint && info.shared?.includes(hint)) return { currency: hint };
    if (info.default) return { currency: info.default };
    return { ambiguous: info.shared ?? [] };
  }
  if (/^[A-Z]{3}$/.test(marker) && isIsoCode(marker) && (!CODE_WORDS.has(marker) || marker === hint)) {
    return { currency: marker };
  }
  return undefined;
}
