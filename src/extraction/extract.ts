/**
 * extractPrices: the price, currency and stock state of the product a page is about.
 *
 * Sources, in order of preference (every price found is listed in `candidates` with its source
 * and where it came from, so a user can see why one was chosen and pin a selector):
 *   1. The listing's CSS selector, when it yields a readable price. If it matches nothing or only
 *      unreadable text, that is noted and the automatic sources below decide.
 *   2. schema.org JSON-LD: the main Product's offer (see json-ld.ts for which product and which
 *      offer: the URL's variant, in-stock single offers before AggregateOffer price/lowPrice, sale
 *      before list price).
 *   3. schema.org microdata, then RDFa (`itemprop`/`property` price, content before text).
 *   4. Open Graph / product meta tags (`product:sale_price:amount`, `product:price:amount`,
 *      `og:price:amount`).
 *   5. Shop platform markup: Shopify, WooCommerce, Magento, BigCommerce (platforms/*.ts).
 * The chosen price is the first candidate not marked `ignored`. Candidates are ignored when
 * they are list/strikethrough/compare-at prices, unit prices, another product's or variant's
 * price, a zero placeholder, or platform prices outside the product block that disagree.
 *   6. The visible page (visible/find.ts): the price a shopper sees, scored by marks and position,
 *      when no source above gives one; and a witness that overrules a structured price the page
 *      shows struck through or contradicts with confidence. Off with `visibleFallback: false`.
 * There is no "first number on the page" fallback: when the finder is not sure it refuses, and
 * `failure` says what was looked for, so the check records nothing rather than a wrong number.
 *
 * Currency: `currencyOverride` when given (it replaces every candidate's currency); else the
 * currency the structured source states; else the symbol or code in the text (with the page's
 * structured currency settling '$', '¥', 'kr'); else, for text sources, the page's currency.
 *
 * Availability: from the chosen candidate's source, else the first source that states one
 * (JSON-LD, microdata, meta, platform data), else the visible page (stock messages, the buy
 * button's label and state; a message in words also overrules a structured value), else 'unknown'.
 *
 * Cost: the page is parsed once, streaming, with no DOM (scan.ts); a DOM is built only when the
 * listing has a selector, and then the automatic sources read that DOM instead of a second parse.
 */
import { load } from 'cheerio/slim';
import { availabilityFromButton, type Availability, inStockOf } from './availability.js';
import { normaliseCurrencyCode } from '../money/currency.js';
import { compareDecimals } from '../money/decimal.js';
import { fromJsonLd } from './json-ld.js';
import { fromMeta } from './meta.js';
import { fromMicrodata } from './microdata.js';
import { fromBigCommerce } from './platforms/bigcommerce.js';
import { fromMagento } from './platforms/magento.js';
import { fromShopify } from './platforms/shopify.js';
import { fromWooCommerce } from './platforms/woocommerce.js';
import { MAX_NESTING, parseDocument, scanDocument, scanPage } from './scan.js';
import { fromSelector } from './selector.js';
import { type SourceContext, type SourceResult, variantParam } from './source.js';
import type { Candidate, ExtractOptions, Extraction } from './types.js';
import { type VisibleResult, findVisiblePrice, samePrice } from './visible/find.js';

/** How sure the visible-price finder must be to overrule a structured price it does not see struck through. */
export const WITNESS_CONFIDENCE = 0.75;

/**
 * The visible page against the structured price: the visible price wins when the structured one
 * is the price the page shows struck through ("UVP", "was"), or when the finder is sure of
 * another current price; the structured candidates it overrules are ignored with the reason.
 */
function weighVisible(candidates: Candidate[], vis: VisibleResult, notes: string[], variantUrl: boolean): Candidate[] {
  const chosen = candidates.find((c) => !c.ignored);
  if (!chosen) return [...candidates, ...vis.candidates];
  const v = vis.chosen;
  if (chosen.source === 'selector' || !v) return candidates;
  if (v.currency && chosen.currency && v.currency !== chosen.currency) return candidates;
  if (samePrice(v.price, chosen.price)) {
    chosen.evidence ??= v.evidence;
    return candidates;
  }
  const wasOld = vis.oldPrices.some((o) => samePrice(o, chosen.price));
  // Structured data written for a B2B feed gives the price without VAT the page shows beside the consumer price.
  const wasExTax = vis.exTaxPrices.some((o) => samePrice(o, chosen.price));
  // Another structured price the page shows: two sources agree against one ("meta says 200, the
  // page shows 200, JSON-LD says 150": the current bid against the starting price).
  const agrees = variantUrl
    ? undefined
    : candidates.find(
        (c) =>
          c !== chosen &&
          !c.ignored &&
          c.source !== 'selector' &&
          samePrice(c.price, v.price) &&
          (!c.currency || c.currency === v.currency),
      );
  if (agrees) {
    const why = `the page shows ${v.price}, as ${agrees.source} says (visible-price finder, confidence ${v.confidence})`;
    for (const c of candidates) if (!c.ignored && samePrice(c.price, chosen.price)) c.ignored = why;
    agrees.evidence ??= v.evidence;
    notes.push(
      `structured prices disagree: ${chosen.source} says ${chosen.price}, ${agrees.source} says ${agrees.price} and the page shows it at ${v.detail}; chose ${agrees.price}`,
    );
    return [agrees, ...candidates.filter((c) => c !== agrees)];
  }
  // A URL naming a variant picks that variant's structured price; the page may show the default variant's.
  if (variantUrl || (!wasOld && !wasExTax && (v.confidence ?? 0) < WITNESS_CONFIDENCE)) {
    // Not sure enough to overrule: listed, so "sources disagree" says so.
    return [...candidates, v];
  }
  const why = wasOld
    ? `equals the old price the page shows struck through or as "was"/"UVP" beside the current ${v.price}`
    : wasExTax
      ? `equals the price the page shows without VAT beside the consumer price ${v.price}`
      : `the page shows ${v.price} as the current price (visible-price finder, confidence ${v.confidence})`;
  for (const c of candidates) if (!c.ignored && samePrice(c.price, chosen.price)) c.ignored = why;
  notes.push(
    `structured and visible prices disagree: ${chosen.source} says ${chosen.price}, the page shows ${v.price} at ${v.detail}; chose the visible price`,
  );
  return [v, ...candidates, ...vis.candidates.slice(1)];
}

/** Why the input is not an HTML page, or undefined when it looks like one. */
function notHtml(input: string): string | undefined {
  const head = input.slice(0, 4096).trimStart();
  if (head === '') return 'the page is empty';
  if (head.startsWith('%PDF')) return 'the response is a PDF document, not an HTML page';
  if (head.includes('\u0000')) return 'the response is binary data, not an HTML page';
  if (head.startsWith('{') || head.startsWith('[')) {
    try {
      JSON.parse(input);
      return 'the response is JSON, not an HTML page';
    } catch {
      // not JSON after all; fall through
    }
  }
  if (!/<[a-zA-Z!?/]/.test(input.slice(0, 65_536)))
    return 'the response is plain text, not an HTML page (no markup found)';
  return undefined;
}

function toUrl(u: string | undefined, base?: URL): URL | undefined {
  if (!u) return undefined;
  try {
    return new URL(u, base);
  } catch {
    return undefined;
  }
}

export function extractPrices(html: string, options: ExtractOptions = {}): Extraction {
  const notes: string[] = [];
  const override = normaliseCurrencyCode(options.currencyOverride);
  if (options.currencyOverride && !override) {
    notes.push(
      `the currency override ${JSON.stringify(options.currencyOverride)} is not an ISO 4217 code and was ignored`,
    );
  }
  const input = typeof html === 'string' ? html : '';
  const bad = notHtml(input);
  if (bad) return { candidates: [], availability: 'unknown', failure: bad, notes };

  const selector = options.selector?.trim();
  const dom = selector ? parseDocument(input) : undefined;
  const $ = dom ? load(dom.root) : undefined;
  const visibleOn = options.visibleFallback !== false;
  const scan = dom ? scanDocument(dom.root, visibleOn) : scanPage(input, visibleOn);
  if (scan.truncated || dom?.truncated) {
    notes.push(`the page nests elements more than ${MAX_NESTING} deep; only the part before that was read`);
  }
  const base = toUrl(options.baseUrl);
  const pageUrl = base ?? toUrl(scan.canonical);
  const ctx = (currency: string | undefined): SourceContext => ({
    pageUrl,
    hints: { currency, locale: options.locale },
  });

  // Structured sources first: they state the page's currency, which reading text needs.
  const ld = fromJsonLd(scan.jsonLd, ctx(override));
  const meta = fromMeta(scan);
  let pageCurrency = override ?? ld.currency ?? meta.currency;
  const micro = fromMicrodata(scan, ctx(pageCurrency));
  pageCurrency ??= micro.currency;
  const shopify = fromShopify(scan, ctx(pageCurrency));
  const bigcommerce = fromBigCommerce(scan, ctx(pageCurrency));
  pageCurrency ??= shopify.currency ?? bigcommerce.currency;
  const woo = fromWooCommerce(scan, ctx(pageCurrency));
  const magento = fromMagento(scan, ctx(pageCurrency));
  const sources: SourceResult[] = [ld, micro, meta, shopify, woo, magento, bigcommerce];
  for (const s of sources) notes.push(...s.notes);

  const sel = selector && $ ? fromSelector($, selector, ctx(pageCurrency)) : undefined;
  if (sel) notes.push(...sel.notes);

  let candidates: Candidate[] = [...(sel?.candidates ?? []), ...sources.flatMap((s) => s.candidates)];
  const vis = scan.visible
    ? findVisiblePrice(scan.visible, { currency: pageCurrency, locale: options.locale })
    : undefined;
  if (vis) {
    if (override) for (const c of vis.candidates) c.currency = override;
    candidates = weighVisible(candidates, vis, notes, variantParam(options.baseUrl) !== undefined);
  }
  if (override) {
    const replaced = new Set(candidates.map((c) => c.currency).filter((c): c is string => !!c && c !== override));
    if (replaced.size)
      notes.push(`the currency override ${override} replaces ${[...replaced].join(', ')} found on the page`);
    for (const c of candidates) c.currency = override;
  }
  const chosen = candidates.find((c) => !c.ignored);

  const stated = chosen?.availability ?? sources.map((s) => s.availability).find((a) => a !== undefined);
  let availability: Availability;
  if (vis) {
    const seen = vis.availability;
    availability = stated ?? seen?.value ?? 'unknown';
    if (stated && seen?.strong && seen.value !== stated) {
      notes.push(
        `the page says ${seen.value.replaceAll('_', ' ')} (${seen.why}) although the structured data says ${stated.replaceAll('_', ' ')}; chose what the page says`,
      );
      availability = seen.value;
      // The price recorded carries the stock state recorded with it.
      if (chosen?.availability !== undefined) {
        chosen.availability = seen.value;
        chosen.inStock = inStockOf(seen.value) as boolean;
      }
    }
  } else {
    const button = scan.buttons[0];
    const buttonAvailability = button
      ? availabilityFromButton(
          button.text || button.attrs.value || button.attrs['aria-label'] || '',
          button.attrs.disabled !== undefined || button.attrs['aria-disabled'] === 'true',
        )
      : undefined;
    availability = stated ?? buttonAvailability ?? 'unknown';
  }

  if (chosen) {
    if (sel?.problem) notes.push(`${sel.problem}; used the ${chosen.source} price instead`);
    const disagree = candidates.filter(
      (c) =>
        !c.ignored &&
        c.source !== chosen.source &&
        compareDecimals(c.price, chosen.price) !== 0 &&
        (!c.currency || !chosen.currency || c.currency === chosen.currency),
    );
    if (disagree.length) {
      notes.push(
        `sources disagree: chose ${chosen.price} from ${chosen.source}, but ${disagree
          .slice(0, 3)
          .map((c) => `${c.source} says ${c.price}`)
          .join(', ')}; pin a CSS selector if the chosen price is wrong`,
      );
    }
    if (chosen.range)
      notes.push(`the chosen price is the low end of a range (${chosen.range.low} – ${chosen.range.high})`);
    else if (chosen.from) notes.push('the chosen price is a starting price ("from")');
    if (chosen.period) notes.push(`the chosen price is charged per ${chosen.period}`);
    if (!chosen.currency) notes.push("no currency found on the page; set the listing's currency override");
    return { chosen, candidates, availability, notes };
  }

  let failure: string;
  const structured = candidates.filter((c) => c.source !== 'visible');
  if (structured.length) {
    // "another product's price ("X")" -> counted once per kind of reason.
    const counts = new Map<string, number>();
    for (const c of structured) {
      const why = (c.ignored ?? '').replace(/ \(.*\)$/, '');
      counts.set(why, (counts.get(why) ?? 0) + 1);
    }
    const reasons = [...counts].slice(0, 3).map(([why, n]) => `${n} × ${why}`);
    const context = ld.missing && !/^no JSON-LD/.test(ld.missing) ? ` (${ld.missing})` : '';
    failure = `no price for this page's product: found ${structured.length} price${structured.length > 1 ? 's' : ''}, none usable: ${reasons.join('; ')}${context}`;
  } else {
    const missing = [ld.missing, micro.missing, meta.missing];
    const platform = [shopify, woo, magento, bigcommerce].map((s) => s.missing).filter(Boolean);
    missing.push(...(platform.length ? platform : ['no known shop platform markup']));
    failure = `no price found: ${missing.filter(Boolean).join(', ')}`;
  }
  if (vis?.refusal) failure += `, and ${vis.refusal.replace(/; pin a CSS selector.*$/, '')}`;
  failure = sel?.problem
    ? `${sel.problem}, and ${failure}; check the selector`
    : `${failure}; set a CSS selector for the price`;
  if (scan.truncated || dom?.truncated)
    failure += ` (only the part of the page nested less than ${MAX_NESTING} deep was read)`;
  return { candidates, availability, failure, notes };
}
