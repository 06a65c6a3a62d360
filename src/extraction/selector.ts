/**
 * The listing's own CSS selector. This is the one path that builds a DOM (cheerio on
 * htmlparser2, full CSS support), only for listings that set a selector; the automatic sources
 * then read the same DOM (scanDocument) instead of tokenizing the page again. The first matching
 * element whose text reads as a price wins; `<meta>` gives its `content`, form fields their
 * `value`; other elements their visible text (struck-through prices and screen-reader labels
 * left out), falling back to a `content` attribute.
 */
import { type CheerioAPI, load } from 'cheerio/slim';
import type { AnyNode, Element } from 'domhandler';
import { makeCandidate, quote, readTextPrice, type SourceContext } from './source.js';
import { BLOCK_TAGS, MAX_CAPTURE, SPLIT_CENTS, isHiddenOrStruck, joinSplitCents } from './text.js';
import type { Candidate } from './types.js';

const MAX_MATCHES = 10;

function visibleText(el: Element): string {
  let out = '';
  const walk = (nodes: AnyNode[]): void => {
    for (const n of nodes) {
      if (out.length > MAX_CAPTURE) return;
      if (n.type === 'text') out += n.data;
      else if (n.type === 'tag' || n.type === 'script' || n.type === 'style') {
        const e = n as Element;
        if (isHiddenOrStruck(e.name, e.attribs)) continue;
        const block = BLOCK_TAGS.has(e.name);
        if (block) out += ' ';
        const start = out.length;
        walk(e.children);
        // Cents set in an inline element of their own ("$229<span>99</span>").
        if (!block && SPLIT_CENTS.test(out.slice(start))) out = joinSplitCents(out.slice(0, start), out.slice(start));
        if (block) out += ' ';
      }
    }
  };
  walk(el.children);
  return out.replace(/\s+/g, ' ').trim();
}

export interface SelectorResult {
  candidates: Candidate[];
  /** Why the selector gave no price: matched nothing, invalid, or only unreadable text. */
  problem?: string;
  notes: string[];
}

export function fromSelector($: CheerioAPI, selector: string, ctx: SourceContext): SelectorResult {
  const notes: string[] = [];
  let matches: Element[];
  try {
    matches = $(selector)
      .toArray()
      .filter((n): n is Element => n.type === 'tag' || n.type === 'script' || n.type === 'style');
  } catch (err) {
    return {
      candidates: [],
      notes,
      problem: `the selector ${quote(selector)} is not valid CSS (${(err as Error).message})`,
    };
  }
  if (matches.length === 0)
    return { candidates: [], notes, problem: `the selector ${quote(selector)} matched no element` };
  const candidates: Candidate[] = [];
  const unreadable: string[] = [];
  matches.slice(0, MAX_MATCHES).forEach((el, i) => {
    const a = el.attribs;
    const texts: Array<{ text: string; from: string }> = [];
    if (el.name === 'meta') texts.push({ text: a.content ?? '', from: 'content' });
    else if (el.name === 'input' || el.name === 'data') texts.push({ text: a.value ?? '', from: 'value' });
    else {
      texts.push({ text: visibleText(el), from: 'text' });
      if (a.content !== undefined) texts.push({ text: a.content, from: 'content' });
    }
    const at = matches.length > 1 ? ` match ${i + 1} of ${matches.length}` : '';
    for (const { text, from } of texts) {
      const read = readTextPrice(text, ctx.hints);
      if (read.ok) {
        candidates.push(
          makeCandidate({
            source: 'selector',
            detail: `${selector}${at} (${from})`,
            raw: text,
            read,
            currency: read.currency ?? ctx.hints.currency,
            ignored: candidates.some((c) => !c.ignored)
              ? 'a later match of the selector; the first readable one is used'
              : undefined,
          }),
        );
        return;
      }
      unreadable.push(`${quote(text)}: ${read.reason}`);
    }
  });
  if (matches.length > MAX_MATCHES)
    notes.push(`the selector matched ${matches.length} elements; the first ${MAX_MATCHES} were read`);
  const chosen = candidates.find((c) => !c.ignored);
  if (chosen) {
    if (unreadable.length) notes.push(`selector matches without a price: ${unreadable.slice(0, 3).join('; ')}`);
    return { candidates, notes };
  }
  return {
    candidates,
    notes,
    problem: `the selector ${quote(selector)} matched ${matches.length === 1 ? 'an element' : `${matches.length} elements`} without a readable price (${unreadable.slice(0, 3).join('; ')})`,
  };
}

// An empty document to compile selectors against: the same engine (cheerio's css-select) the
// extraction runs them with, so a selector accepted here is one a check can use.
const empty = load('');

/**
 * Why the extraction could not use `selector`, or undefined when it can. `<` is refused outright:
 * cheerio reads a string holding a tag as HTML to create, not as a selector to match.
 */
export function selectorProblem(selector: string): string | undefined {
  if (selector.includes('<')) return 'must be a CSS selector, not HTML (it contains "<")';
  try {
    empty.root().find(selector);
  } catch (err) {
    const reason = err instanceof RangeError ? 'it is nested too deeply' : (err as Error).message;
    return `is not a valid CSS selector: ${reason}`;
  }
  return undefined;
}

/** The 422 detail of a `selector` the extraction could not use; [] for a usable one or none (listings and POST /extract). */
export function checkSelector(selector: string | null | undefined): { field: 'selector'; message: string }[] {
  if (typeof selector !== 'string') return [];
  const problem = selectorProblem(selector);
  return problem ? [{ field: 'selector', message: problem }] : [];
}
