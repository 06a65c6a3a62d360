/**
 * Currency markers next to a number: ISO codes and the signs of currency-signs.ts. A sign maps
 * to one ISO 4217 code by default; signs that several currencies share ('$', '¥', '£', 'kr',
 * 'Rs') take the page's currency instead when that currency is one of them, or an ISO code the
 * same text writes ("NZD $100.70"); 'kr' and a few others have no default at all, so they need
 * a hint.
 */

import { isIsoCode } from '../money/currency.js';
import { SIGNS } from './currency-signs.js';

/** Upper-case words that are ISO codes but far more often English words in shop text. */
const CODE_WORDS: ReadonlySet<string> = new Set(['ALL', 'TOP', 'CUP', 'BOB', 'TRY', 'SOS', 'MAD', 'PEN', 'MOP', 'GEL']);

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
// Longest first, so "US$" wins over "$". A sign ending in a letter must end the word.
const signs = [...SIGNS.keys()].sort((a, b) => b.length - a.length);
const alternative = (s: string): string => escape(s) + (/\p{L}$/u.test(s) ? '(?![\\p{L}])' : '');
const startsWithLetter = (s: string): boolean => /^\p{L}/u.test(s);
// A code or a sign starting with a letter must start the word: one look behind for all of them
// (a look behind in each of some 200 alternatives made these the slowest expressions of a check).
// At any position only one of the two groups can match, so the order of the alternatives within
// each group decides as it would in one list.
const MARKER =
  `(?:(?<![\\p{L}])(?:[A-Z]{3}(?![\\p{L}])|${signs.filter(startsWithLetter).map(alternative).join('|')})` +
  `|${signs
    .filter((s) => !startsWithLetter(s))
    .map(alternative)
    .join('|')})`;

/** A currency marker ending the text (before a number), e.g. "Preis: EUR " or "R$". */
export const MARKER_AT_END = new RegExp(`(${MARKER})\\s*$`, 'u');
/** A currency marker starting the text (after a number), e.g. " zł" or "€*". */
export const MARKER_AT_START = new RegExp(`^\\s*(${MARKER})`, 'u');
/** Every marker in a text. */
export const MARKER_ANYWHERE = new RegExp(MARKER, 'gu');
const CODE_ANYWHERE = /(?<![\p{L}])[A-Z]{3}(?![\p{L}])/gu;

export interface ResolvedMarker {
  /** The ISO code, when the marker and the hint settle it. */
  currency?: string;
  /** Set when the marker is a currency sign but several currencies use it and no hint decided. */
  ambiguous?: readonly string[];
  /** The marker counts 10^scale units of `currency` (the toman). */
  scale?: number;
}

function isCode(word: string, hint: string | undefined): boolean {
  return /^[A-Z]{3}$/.test(word) && isIsoCode(word) && (!CODE_WORDS.has(word) || word === hint);
}

/**
 * What a marker means, or undefined when it is not a currency marker at all (an upper-case word
 * that is no ISO code, or a code-like English word such as "TOP"). `hints` are codes that
 * settle a shared sign, strongest first: the codes the text itself writes, then the page's.
 */
export function resolveMarker(marker: string, ...hints: Array<string | undefined>): ResolvedMarker | undefined {
  const info = SIGNS.get(marker);
  if (info) {
    const settled = hints.find((h) => h !== undefined && info.shared?.includes(h));
    const currency = settled ?? info.default;
    if (!currency) return { ambiguous: info.shared ?? [] };
    return info.scale ? { currency, scale: info.scale } : { currency };
  }
  return isCode(marker, hints[hints.length - 1]) ? { currency: marker } : undefined;
}

/** The ISO codes a text writes as words ("NZD $100.70" -> NZD), when it writes exactly one. */
export function soleCodeIn(text: string, hint: string | undefined): string | undefined {
  let found: string | undefined;
  for (const m of text.matchAll(CODE_ANYWHERE)) {
    if (!isCode(m[0], hint)) continue;
    if (found !== undefined && found !== m[0]) return undefined;
    found = m[0];
  }
  return found;
}
