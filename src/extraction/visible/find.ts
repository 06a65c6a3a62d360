/**
 * The visible-price finder: the price a shopper sees, from the page's text and layout alone.
 *
 * The main product block is the smallest element holding both the product title (<h1>) and the
 * add-to-cart button. Every price-marked element (class, id, itemprop or aria-label naming a
 * price) and every text with a currency beside a number is read with the shared price parser,
 * then scored by its marks and where it stands; prices in headers, footers, menus, carts,
 * carousels of other products, shipping / instalment / unit-price lines, and struck-through or
 * "was / UVP / RRP / statt" prices are listed but never chosen. Deterministic: no model.
 *
 * It refuses rather than guess: when the two best different prices score alike, when the best is
 * weakly marked, or when the best text is a number that reads two ways ("1.299").
 */
import { aboutStores, type Availability, availabilityFromText, buttonLabelKind } from '../availability.js';
import { compareDecimals, isZeroDecimal } from '../../money/decimal.js';
import { parsePrice, type PriceHints } from '../parse-price.js';
import { EX_TAX_BEFORE, FROM_BEFORE, OLD_WORDS, SAVE_BEFORE } from '../price-words.js';
import { quote } from '../source.js';
import type { Candidate, Evidence } from '../types.js';
import {
  C_CART,
  C_CHROME,
  C_EXTAX,
  C_FORM,
  C_MAINLIKE,
  C_OLDBOX,
  C_OTHERS,
  C_STRUCK,
  C_TERMS,
  M_ARIA,
  M_CURRENT,
  M_ITEMPROP,
  M_OLD,
  M_PRICE,
  amongOthers,
  buttonLabel,
  buyButton,
  repeatedShapes,
  shapeOf,
  type VisibleNode,
  type VisibleScan,
} from './collect.js';

export interface VisibleAvailability {
  value: Exclude<Availability, 'unknown'>;
  /** Said in words (a stock message, a "Sold out" button), not only implied by a button's state. */
  strong: boolean;
  why: string;
}

export interface VisibleResult {
  /** Chosen price first (when there is one), then the others, each `ignored` with its reason. */
  candidates: Candidate[];
  chosen?: Candidate;
  /** Why no price was chosen. */
  refusal?: string;
  /** Old prices (struck through, "was", "UVP") shown for the main product. */
  oldPrices: string[];
  /** Prices the product block shows as without VAT ("bez DPH", "exkl. MwSt.") beside the consumer price. */
  exTaxPrices: string[];
  availability?: VisibleAvailability;
}

/** Lowest score a price may win with, and the lead it needs over the next different price. */
export const MIN_SCORE = 6;
export const MIN_LEAD = 2;
const MAX_LISTED = 12;
const SNIPPET = 120;

const SHIPPING_TEXT =
  /(?<![\p{L}])(?:shipping|delivery|versand\p{L}*|lieferung|livraison|envío|envio|frete|spedizione|dostawa|доставка|verzending|frakt|porto|postage|per month|a month|\/\s*mo|monatlich|par mois|al mes|por mes|ao mês|klarna|afterpay|paypal|zinsen|ratenzahlung|raten|mensualit\p{L}*|cuotas|parcelas|interest|free over|ab \d|über \d|ex\.? tax|excl\.?|excluding|exkl\.?|netto|ohne mwst|hors taxes?|sin iva|lowest price|niedrigster preis|najniższa cena|prix le plus bas|30 (?:days|tage|tagen|dni|jours|días)|inhalt|grundpreis|contenu|unit price)(?![\p{L}])/iu;
const OLD_LABEL = new RegExp(`${OLD_WORDS}\\.?\\s*:?\\s*$`, 'iu');
const FROM_LABEL = new RegExp(`${FROM_BEFORE}\\.?\\s*:?\\s*$`, 'iu');
const SAVE_LABEL = new RegExp(`${SAVE_BEFORE}\\.?\\s*:?\\s*$`, 'iu');

interface Read {
  node: VisibleNode;
  text: string;
  price?: string;
  currency?: string;
  period?: boolean;
  range?: { low: string; high: string };
  from?: boolean;
  /** Why it cannot be the price, when it cannot. */
  ignored?: string;
  /** A number that reads two ways. */
  ambiguous?: string;
  old?: boolean;
  /** Said to be without VAT. */
  exTax?: boolean;
  score: number;
  why: string[];
}

function textOf(n: VisibleNode): string {
  return (n.el ? n.el.text : (n.text ?? '')).replace(/\s+/g, ' ').trim();
}

/** Index of the deepest shared ancestor of two chains. */
function common(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i - 1;
}

function within(n: VisibleNode, block: readonly number[] | undefined): boolean {
  if (!block) return false;
  const last = block.length - 1;
  return n.chain.length > last && n.chain[last] === block[last];
}

/** Text pieces either side of a node that its snippet may draw on, and enough characters of them. */
const SNIPPET_PIECES = 40;
const SNIPPET_REACH = 4 * SNIPPET;

function snippetOf(n: VisibleNode, raw: string, chunks: readonly string[]): string {
  // Up to 40 text pieces either side of the node, cut to SNIPPET characters around its text. A
  // description's paragraph is one piece of hundreds of characters: the pieces stop once they
  // hold more than the cut can keep, so joining and collapsing them stays small.
  let from = n.at;
  for (let chars = 0; from > Math.max(0, n.at - SNIPPET_PIECES) && chars < SNIPPET_REACH;)
    chars += (chunks[--from] as string).length;
  let to = n.at;
  for (let chars = 0; to < Math.min(chunks.length, n.at + SNIPPET_PIECES) && chars < SNIPPET_REACH;)
    chars += (chunks[to++] as string).length;
  const before = chunks.slice(from, n.at).join('').replace(/\s+/g, ' ');
  const after = chunks.slice(n.at, to).join('').replace(/\s+/g, ' ');
  const text = `${before}${after}`.trim();
  if (text.length <= SNIPPET) return text || raw;
  const at = Math.max(0, text.indexOf(raw.slice(0, 20)));
  const start = Math.max(0, Math.min(at - 40, text.length - SNIPPET));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + SNIPPET).trim()}${start + SNIPPET < text.length ? '…' : ''}`;
}

const REGIONS: ReadonlyArray<readonly [number, string]> = [
  [C_CART, 'in the shopping cart'],
  [C_CHROME, 'in the page header, footer or navigation'],
  [C_OTHERS, "another product's price (carousel, related or listed products)"],
];
/** Ignored prices outside the product's regions read (and listed) per page: reading costs, listing them all says nothing more. */
const MAX_OUTSIDE = 6;

function regionOf(n: VisibleNode, h1: VisibleNode | undefined): string | undefined {
  // The same "listing" / "product-card" wrapper as the title's is the product page itself.
  const ctx = amongOthers(n, h1) ? n.ctx : n.ctx & ~C_OTHERS;
  return REGIONS.find(([flag]) => ctx & flag)?.[1];
}

function readNode(node: VisibleNode, hints: PriceHints, chunks: readonly string[], region?: string): Read {
  const text = textOf(node);
  const r: Read = { node, text, score: 0, why: [] };
  if (!text) return { ...r, ignored: 'no visible text' };
  // "List Price: <span>$49.99</span>", "statt <span>…</span>", "bez DPH <span>…</span>", "from
  // <span>£36.61</span>": the label before the element (a text node's is before its first piece).
  const start = node.el ? node.at : node.at - 1;
  const before = chunks
    .slice(Math.max(0, start - 3), Math.max(0, start))
    .join('')
    .replace(/\s+/g, ' ')
    .slice(-30);
  const worded = /\p{L}\.?\s*[:：]?\s*$/u.test(before);
  const labelled = worded && OLD_LABEL.test(before);
  const struck = labelled || (node.ctx & (C_STRUCK | C_OLDBOX)) !== 0 || ((node.marks | node.boxMarks) & M_OLD) !== 0;
  const p = parsePrice(text, hints);
  if (p.ok && p.old) r.old = true;
  if (!p.ok) {
    if (/could be .* or .*: nothing says whether/.test(p.reason)) r.ambiguous = p.reason;
    return { ...r, ignored: p.reason };
  }
  Object.assign(r, {
    price: p.amount,
    currency: p.currency,
    range: p.range,
    from: p.from,
    period: p.period !== undefined,
  });
  if (struck || r.old) return { ...r, old: true, ignored: 'a struck-through or old ("was", "UVP", "RRP") price' };
  if (region) return { ...r, ignored: region };
  if (p.exTax || node.ctx & C_EXTAX || (worded && EX_TAX_BEFORE.test(before)))
    return { ...r, exTax: true, ignored: 'the price without VAT' };
  if (node.ctx & C_TERMS || SHIPPING_TEXT.test(text) || (worded && SAVE_LABEL.test(before))) {
    return { ...r, ignored: 'a shipping, instalment, unit-price or saving line' };
  }
  if (worded && FROM_LABEL.test(before)) r.from = true;
  if (p.period) return { ...r, ignored: `a price per ${p.period} (instalment or subscription)` };
  if (isZeroDecimal(p.amount)) return { ...r, ignored: 'a zero price, usually a placeholder' };
  if (!p.currency && !p.currencyText) {
    if (!(node.marks & M_PRICE)) return { ...r, ignored: 'a number with no currency and no price mark' };
    if (node.boxMarks & M_PRICE) return { ...r, ignored: 'a part of a price (whole units or cents on their own)' };
  }
  return r;
}

interface Anchors {
  block?: readonly number[];
  button?: VisibleNode;
  h1?: VisibleNode;
}

function score(r: Read, a: Anchors): void {
  const n = r.node;
  const add = (points: number, why: string): void => {
    r.score += points;
    r.why.push(`${points > 0 ? '+' : ''}${points} ${why}`);
  };
  const marks = n.marks | n.boxMarks;
  if (marks & M_ITEMPROP) add(3, 'itemprop=price');
  else if (marks & M_PRICE) add(3, 'marked as a price (class, id or label)');
  if (marks & M_CURRENT) add(2, 'marked as the current / sale price');
  if (marks & M_ARIA && !(marks & M_ITEMPROP)) add(1, 'aria-label names a price');
  if (r.currency) add(2, 'currency shown');
  if (a.block) {
    if (within(n, a.block)) add(4, 'in the product block (title and buy button)');
    else add(-3, 'outside the product block');
  } else if (n.ctx & C_MAINLIKE) add(2, 'in a product-detail section');
  if (n.ctx & C_FORM) add(2, 'in the add-to-cart form');
  if (a.button) {
    const d = Math.abs(a.button.seq - n.seq);
    if (d <= 12) add(3, 'next to the buy button');
    else if (d <= 40) add(2, 'near the buy button');
    else if (d <= 100) add(1, 'not far from the buy button');
  }
  if (a.h1) {
    const d = n.seq - a.h1.seq;
    if (d > 0 && d <= 40) add(2, 'just after the title');
    else if (d > 0 && d <= 150) add(1, 'after the title');
    // Inside the product block a buy box may come first (a right-hand column written first).
    else if (d < -40 && !within(n, a.block)) add(-1, 'well before the title');
  }
  if (r.range || r.from) add(-1, 'a range or starting price');
  if (r.text.length > 60) add(-2, 'inside a long text');
}

function candidateOf(r: Read, hints: PriceHints, chunks: readonly string[], extra: Partial<Candidate>): Candidate {
  const c: Candidate = { price: r.price as string, source: 'visible', detail: r.node.path, raw: r.text };
  // The snippet costs a join of the text around: only the price that may be chosen carries one.
  if (extra.ignored === undefined)
    c.evidence = { path: r.node.path, text: r.text, snippet: snippetOf(r.node, r.text, chunks) } satisfies Evidence;
  const currency = r.currency;
  if (currency) c.currency = currency;
  else if (hints.currency && r.price) c.currency = hints.currency;
  if (r.range) c.range = r.range;
  if (r.from) c.from = true;
  if (r.why.length) c.reason = `score ${r.score}: ${r.why.join(', ')}`;
  return { ...c, ...extra };
}

/** A stock message says something about buying this product online now. */
function stockMessage(s: VisibleNode): string | undefined {
  const t = textOf(s);
  if (t.length > 120) return undefined;
  // "Unavailable for store pickup", "Verfügbarkeit in der Filiale": about the shop's stores.
  if (aboutStores(`${t} ${s.el?.attrs.class ?? ''} ${s.el?.attrs.id ?? ''}`.replace(/([a-z])([A-Z])/g, '$1 $2')))
    return undefined;
  // A row of a seller or variant table ("Seller X ₹2,433 In stock"): an offer, not the page's statement.
  if (/\d/.test(t)) {
    const p = parsePrice(t, {});
    if (p.ok && p.currencyText) return undefined;
  }
  return t;
}

function findAvailability(scan: VisibleScan, a: Anchors): VisibleAvailability | undefined {
  let weak: VisibleAvailability | undefined;
  const strong: VisibleAvailability[] = [];
  const near = (n: VisibleNode): boolean =>
    !a.block || within(n, a.block) || (!!a.button && Math.abs(a.button.seq - n.seq) < 60);
  // A statement in plain text, with no class or id saying it is about stock ("En Stock" in a
  // <p>): only "in stock", and only when nothing else says anything. Pages carry the texts of
  // other states hidden by their scripts ("Produto Indisponível", "List unavailable.").
  let plain: VisibleAvailability | undefined;
  for (const s of scan.stock) {
    if (s.ctx & (C_CART | C_CHROME) || amongOthers(s, scan.h1) || !near(s)) continue;
    const t = stockMessage(s);
    const v = t ? availabilityFromText(t) : undefined;
    if (!v || !t) continue;
    if (s.el) strong.push({ value: v, strong: true, why: `the stock message ${quote(t)}` });
    else if (v === 'in_stock') plain ??= { value: v, strong: false, why: `the page says ${quote(t)}` };
  }
  const b = a.button;
  if (b) {
    const label = buttonLabel(b);
    const kind = buttonLabelKind(label);
    if (kind === 'sold_out')
      strong.unshift({ value: 'out_of_stock', strong: true, why: `the buy button reads ${quote(label)}` });
    else if (kind === 'preorder')
      strong.unshift({ value: 'preorder', strong: true, why: `the buy button reads ${quote(label)}` });
    else if (b.disabled)
      weak = { value: 'out_of_stock', strong: false, why: `the buy button ${quote(label)} is disabled` };
    else if (kind === 'buy' || b.buy)
      weak = { value: 'in_stock', strong: false, why: `the buy button ${quote(label)} is enabled` };
  }
  return strong.find((s) => s.value !== 'in_stock') ?? strong[0] ?? weak ?? plain;
}

export function findVisiblePrice(scan: VisibleScan, pageHints: PriceHints): VisibleResult {
  // '¥' on a Japanese page is the yen even beside kanji-only text ("¥3,980(税込)").
  const hints = !pageHints.currency && /^ja\b/i.test(scan.lang ?? '') ? { ...pageHints, currency: 'JPY' } : pageHints;
  // A button repeated in the same place three times or more (a row per seller or size) is not the product's own.
  const listed = repeatedShapes(scan.buttons);
  const button = buyButton(
    scan.buttons.filter((b) => !listed.has(shapeOf(b))),
    scan.h1,
  );
  const anchors: Anchors = { button, h1: scan.h1 };
  if (scan.h1 && button) {
    const at = common(scan.h1.chain, button.chain);
    // A block as wide as <body> says nothing about where the product is.
    if (at >= 2) anchors.block = scan.h1.chain.slice(0, at + 1);
  }
  const availability = findAvailability(scan, anchors);

  const inside = scan.prices.filter((n) => !regionOf(n, scan.h1));
  const shapes = new Map<string, number>();
  for (const n of inside) shapes.set(shapeOf(n), (shapes.get(shapeOf(n)) ?? 0) + 1);
  // Prices outside the product's regions are read only to explain a refusal (reading costs).
  const reads: Read[] = [];
  const outside: Array<[VisibleNode, string]> = [];
  for (const n of scan.prices) {
    const repeated = regionOf(n, scan.h1) ? 0 : (shapes.get(shapeOf(n)) ?? 0);
    const region =
      regionOf(n, scan.h1) ??
      (repeated >= 3
        ? `one of ${repeated} prices in the same place of repeated blocks: a list of products`
        : undefined);
    if (!region) reads.push(readNode(n, hints, scan.chunks));
    else if (outside.length < MAX_OUTSIDE) outside.push([n, region]);
  }
  for (const r of reads) if (!r.ignored || r.ambiguous || r.old) score(r, anchors);
  const ownBlock = (r: Read): boolean =>
    !(r.node.ctx & (C_CART | C_CHROME | C_OTHERS)) && (!anchors.block || within(r.node, anchors.block));
  const oldPrices = reads.filter((r) => r.old && r.price && ownBlock(r)).map((r) => r.price as string);
  const exTaxPrices = reads.filter((r) => r.exTax && r.price && ownBlock(r)).map((r) => r.price as string);

  // One entry per amount: the same price shown twice (a screen-reader copy, nested boxes) counts once, at its best.
  const groups = new Map<string, Read>();
  for (const r of reads) {
    if (r.ignored || !r.price) continue;
    // The same amount with and without its sign ("€ 17,10" and "17,10" inside it) is one price.
    const key = `${r.price.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '')} ${r.currency ?? hints.currency ?? ''}`;
    const had = groups.get(key);
    if (!had || r.score > had.score) groups.set(key, r);
  }
  const ranked = [...groups.values()].sort((x, y) => y.score - x.score || x.node.seq - y.node.seq);
  const ignored = reads.filter((r) => r.ignored && r.price);
  if (!ranked[0]) for (const [n, region] of outside) ignored.push(readNode(n, hints, scan.chunks, region));
  for (let i = ignored.length - 1; i >= 0; i--) if (!ignored[i]?.price) ignored.splice(i, 1);
  const listIgnored = (): Candidate[] =>
    ignored.slice(0, MAX_LISTED).map((r) => candidateOf(r, hints, scan.chunks, { ignored: r.ignored as string }));

  const best = ranked[0];
  const second = ranked[1];
  const unclear = reads.filter((r) => r.ambiguous).sort((x, y) => y.score - x.score)[0];
  const pin = 'pin a CSS selector for the price';
  let refusal: string | undefined;
  const unreadable = reads.find(
    (r) => !r.price && r.text && r.ignored && r.node.marks & M_PRICE && !(r.node.ctx & (C_CART | C_CHROME | C_OTHERS)),
  );
  if (!best) {
    if (unclear) refusal = `the visible price ${quote(unclear.text)} reads two ways (${unclear.ambiguous}); ${pin}`;
    else if (unreadable)
      refusal = `the visible price ${quote(unreadable.text)} cannot be read (${unreadable.ignored}); ${pin}`;
    else if (ignored.length) {
      refusal = `the visible page shows ${ignored.length} price${ignored.length > 1 ? 's' : ''}, none the product's (${[...new Set(ignored.map((r) => r.ignored))].slice(0, 2).join('; ')})`;
    } else refusal = 'no price-like text on the visible page';
  } else if (unclear && unclear.score >= best.score) {
    refusal = `the visible price ${quote(unclear.text)} reads two ways (${unclear.ambiguous}); ${pin}`;
  } else if (best.score < (second ? MIN_SCORE : MIN_SCORE - 1)) {
    const needed = second ? MIN_SCORE : MIN_SCORE - 1;
    refusal = `no visible price stands out as the product's (best: ${best.price} at ${best.node.path}, score ${best.score} of the ${needed} needed); ${pin}`;
  } else if (second && best.score - second.score < MIN_LEAD) {
    refusal = `two visible prices are equally likely the product's: ${best.price} (${best.node.path}) and ${second.price} (${second.node.path}); ${pin} on the one you mean`;
  }

  const others = (from: number, why: (r: Read) => string): Candidate[] =>
    ranked.slice(from, from + MAX_LISTED).map((r) => candidateOf(r, hints, scan.chunks, { ignored: why(r) }));
  if (refusal || !best) {
    return {
      candidates: [...others(0, () => 'the visible-price finder refused to choose'), ...listIgnored()],
      refusal,
      oldPrices,
      exTaxPrices,
      availability,
    };
  }
  const lead = second ? best.score - second.score : best.score;
  const confidence = Math.round(Math.min(1, best.score / 14) * Math.min(1, lead / 6) * 100) / 100;
  const chosen = candidateOf(best, hints, scan.chunks, { confidence });
  const rest = others(1, (r) => `scored ${r.score}, below the chosen price's ${best.score}`);
  return { chosen, candidates: [chosen, ...rest, ...listIgnored()], oldPrices, exTaxPrices, availability };
}

/** Whether two decimal prices are the same amount. */
export function samePrice(a: string, b: string): boolean {
  return compareDecimals(a, b) === 0;
}
