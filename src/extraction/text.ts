/**
 * What counts as an element's visible price text, shared by the streaming scanner and the
 * selector path: struck-through and old prices, screen-reader-only labels and hidden elements
 * are left out, block elements are separated by a space, and cents set in an element of their
 * own are joined ("$12<sup>99</sup>", "$229<span>99</span>" read "$12.99", "$229.99").
 */

import { classWords, OLD_PRICE_WORD } from './class-words.js';

const SKIP_TAGS: ReadonlySet<string> = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'del',
  's',
  'strike',
  'head',
  'title',
]);

export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  'p',
  'div',
  'li',
  'ul',
  'ol',
  'br',
  'tr',
  'td',
  'th',
  'table',
  'tbody',
  'thead',
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'main',
  'nav',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'dl',
  'dt',
  'dd',
  'form',
  'button',
  'label',
  'option',
  'select',
  'figure',
  'figcaption',
  'blockquote',
  'hr',
  'fieldset',
  'details',
  'summary',
]);

const HIDDEN_CLASS =
  /(?:^|\s)(?:screen-reader-text|sr-only|visually-hidden|visuallyhidden|a11y-hidden|hidden|d-none|(?:[\w-]*[-_])?(?:old|was|compare|compare-at|strike|crossed|before|rrp|uvp|msrp|list|original|non-sale)[-_]{1,2}price(?:[-_][\w-]*)?|price[-_]{1,2}(?:old|was|compare|compare-at|strike|striked|crossed|before|rrp|uvp|msrp|list|original|non-sale)(?:[-_][\w-]*)?)(?=\s|$)/i;

/** Whether an element's text is not part of the visible current price. */
export function isHiddenOrStruck(tag: string, attrs: Readonly<Record<string, string | undefined>>): boolean {
  if (SKIP_TAGS.has(tag)) return true;
  if (attrs.hidden !== undefined) return true;
  const cls = attrs.class;
  if (cls && (HIDDEN_CLASS.test(cls) || OLD_PRICE_WORD.test(classWords(cls, undefined)))) return true;
  const style = attrs.style;
  if (style && /line-through|display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) return true;
  return false;
}

/** Two digits on their own: the cents of a price split over elements. */
export const SPLIT_CENTS = /^\s*\d{2}\s*$/;

/**
 * Joins cents set in an element of their own: called with the text before the element and the
 * element's text. "$229" + "99" (`$229<span class="cents">99</span>`, `<sup>99</sup>`) reads
 * "$229.99", never 22999; after a thousands group the other separator is the decimal one
 * ("1.299" + "99" -> "1.299,99"). Cents after a written separator ("12," + "99") just follow it;
 * a number that already has decimals takes no more (a space keeps the two apart).
 */
export function joinSplitCents(before: string, cents: string): string {
  const b = before.trimEnd();
  if (!SPLIT_CENTS.test(cents) || !/\d$/.test(b)) return before + cents;
  // Decimals already written: two more digits are another number, not more decimals.
  if (/[.,]\d{1,2}$|[.,]\d{4,}$/.test(b)) return `${b} ${cents.trim()}`;
  const group = /([.,])\d{3}$/.exec(b);
  const separator = group ? (group[1] === '.' ? ',' : '.') : '.';
  return `${b}${separator}${cents.trim()}`;
}

/** Whether a space-separated class attribute holds `name`. */
export function hasClass(cls: string | undefined, name: string): boolean {
  if (!cls) return false;
  let i = cls.indexOf(name);
  while (i !== -1) {
    const before = i === 0 ? ' ' : cls[i - 1];
    const after = cls[i + name.length] ?? ' ';
    if ((before === ' ' || before === '\t' || before === '\n') && (after === ' ' || after === '\t' || after === '\n'))
      return true;
    i = cls.indexOf(name, i + 1);
  }
  return false;
}

export const MAX_CAPTURE = 2000;
