/**
 * schema.org Product/Offer in JSON-LD: blocks may hold one object, an array, or an `@graph`;
 * offers may be an Offer, an array of them, an AggregateOffer (lowPrice/highPrice/price, with or
 * without nested offers), reached through `@id` references, ProductGroup `hasVariant`, or an
 * Offer's `itemOffered`. Prices may be numbers or strings, directly on the offer or in
 * `priceSpecification` (incl. UnitPriceSpecification and priceType ListPrice/StrikethroughPrice).
 *
 * Main product: among products not nested in another product or an ItemList, the one whose
 * `url`/`@id` is the page's URL, else the one a WebPage names as `mainEntity`, else the first
 * with offers. Other products' prices are listed but never chosen.
 *
 * Order of the main product's prices: the offer the page URL's `?variant=` names; then single
 * offers before AggregateOffer `price`, before AggregateOffer `lowPrice`; among single offers,
 * in stock before unknown, pre-order and out of stock, then document order; within one offer,
 * `price` before a SalePrice specification before an untyped one. List, strikethrough, MSRP and
 * unit prices are listed as ignored; a ListPrice is used only when the offer has nothing else.
 */
import { availabilityFromValue, type Availability } from './availability.js';
import { normaliseCurrencyCode } from '../money/currency.js';
import { asArray, isObject, parseJsonLd, type JsonObject } from './json.js';
import {
  AVAILABILITY_RANK,
  combineAvailability,
  makeCandidate,
  quote,
  rawText,
  readMachinePrice,
  samePage,
  variantParam,
  type SourceContext,
  type SourceResult,
} from './source.js';
import type { Candidate } from './types.js';

const NOT_ITEMS: ReadonlySet<string> = new Set([
  'offer',
  'aggregateoffer',
  'organization',
  'onlinestore',
  'store',
  'localbusiness',
  'webpage',
  'itempage',
  'website',
  'itemlist',
  'listitem',
  'breadcrumblist',
  'person',
  'place',
  'review',
  'aggregaterating',
  'brand',
  'pricespecification',
  'unitpricespecification',
]);
const OTHER_PRODUCT_TYPES: ReadonlySet<string> = new Set(['vehicle', 'car', 'motorcycle', 'book']);
const NOT_CURRENT: ReadonlySet<string> = new Set([
  'strikethroughprice',
  'msrp',
  'srp',
  'invoiceprice',
  'minimumadvertisedprice',
  'wholesaleprice',
]);
const MAX_DEPTH = 40;
const MAX_OTHER = 10;

function typesOf(node: JsonObject): string[] {
  return asArray(node['@type'])
    .filter((t): t is string => typeof t === 'string')
    .map((t) => (t.split(/[/#:]/).pop() ?? t).toLowerCase());
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function isItem(node: JsonObject): boolean {
  const types = typesOf(node);
  if (
    types.some(
      (t) =>
        t.endsWith('product') || t.endsWith('productgroup') || t.endsWith('productmodel') || OTHER_PRODUCT_TYPES.has(t),
    )
  ) {
    return true;
  }
  return node.offers !== undefined && !types.some((t) => NOT_ITEMS.has(t));
}

interface Found {
  node: JsonObject;
  path: string;
  block: number;
  nested: boolean;
  inList: boolean;
  mainEntity: boolean;
  /** The ProductGroup this product is a `hasVariant` of. */
  variantOf?: JsonObject;
}

interface Walk {
  found: Found[];
  ids: Map<string, JsonObject>;
  /** Offers that name their product through `itemOffered`. */
  offeredBy: Map<JsonObject, Array<{ offer: JsonObject; path: string }>>;
}

function key(path: string, k: string | number): string {
  return typeof k === 'number' ? `${path}[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}["${k}"]`;
}

type WalkContext = Pick<Found, 'nested' | 'inList' | 'mainEntity' | 'variantOf'>;

function walk(v: unknown, path: string, block: number, ctx: WalkContext, w: Walk, depth: number): void {
  if (depth > MAX_DEPTH || typeof v !== 'object' || v === null) return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => walk(x, key(path, i), block, ctx, w, depth + 1));
    return;
  }
  const node = v as JsonObject;
  const id = str(node['@id']);
  if (id && Object.keys(node).some((k) => k !== '@id' && k !== '@type') && !w.ids.has(id)) w.ids.set(id, node);
  const item = isItem(node);
  if (item) w.found.push({ node, path, block, ...ctx });
  for (const [k, child] of Object.entries(node)) {
    if (k === '@context' || typeof child !== 'object' || child === null) continue;
    if (k === 'itemOffered' && !item && isObject(child)) {
      const list = w.offeredBy.get(child) ?? [];
      list.push({ offer: node, path });
      w.offeredBy.set(child, list);
    }
    walk(
      child,
      key(path, k),
      block,
      {
        nested: ctx.nested || (item && k !== 'hasVariant'),
        inList: ctx.inList || k === 'itemListElement',
        mainEntity: k === 'mainEntity',
        variantOf: item && k === 'hasVariant' ? node : undefined,
      },
      w,
      depth + 1,
    );
  }
}

interface Entry {
  c: Candidate;
  rank: number[];
}

interface OfferRef {
  offer: JsonObject;
  path: string;
  variant?: JsonObject;
  parent?: JsonObject;
}

export function fromJsonLd(blocks: readonly string[], ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  if (blocks.length === 0) return { candidates: [], notes, missing: 'no JSON-LD' };
  const w: Walk = { found: [], ids: new Map(), offeredBy: new Map() };
  let invalid = 0;
  blocks.forEach((text, i) => {
    const r = parseJsonLd(text);
    if (r.ok) walk(r.value, '$', i, { nested: false, inList: false, mainEntity: false }, w, 0);
    else {
      invalid++;
      notes.push(`JSON-LD block #${i + 1} is not valid JSON and was ignored (${r.reason})`);
    }
  });
  // A node that is only a reference ({"@id": "#offer"}) stands for the node with that @id.
  const deref = (v: unknown): unknown => {
    if (isObject(v) && typeof v['@id'] === 'string' && Object.keys(v).every((k) => k === '@id' || k === '@type')) {
      return w.ids.get(v['@id']) ?? v;
    }
    return v;
  };
  // References to products resolve too: drop the reference copies, keep the described node.
  const items = w.found.filter((f) => Object.keys(f.node).some((k) => k !== '@id' && k !== '@type'));
  if (items.length === 0) {
    const missing = invalid === blocks.length ? 'JSON-LD is not valid JSON' : 'no JSON-LD Product';
    return { candidates: [], notes, missing };
  }

  const offersOf = (f: Found): OfferRef[] => {
    const out: OfferRef[] = [];
    const add = (list: unknown, path: string, variant?: JsonObject): void => {
      const arr = asArray(list);
      arr.forEach((raw, i) => {
        const o = deref(raw);
        if (!isObject(o)) return;
        const p = Array.isArray(list) ? `${path}[${i}]` : path;
        out.push({ offer: o, path: p, variant });
        if (typesOf(o).includes('aggregateoffer') && o.offers !== undefined) {
          asArray(o.offers).forEach((sub, j) => {
            const s = deref(sub);
            if (isObject(s))
              out.push({
                offer: s,
                path: Array.isArray(o.offers) ? `${p}.offers[${j}]` : `${p}.offers`,
                variant,
                parent: o,
              });
          });
        }
      });
    };
    add(f.node.offers, `${f.path}.offers`);
    asArray(f.node.hasVariant).forEach((raw, i) => {
      const v = deref(raw);
      if (isObject(v))
        add(v.offers, `${f.path}.hasVariant${Array.isArray(f.node.hasVariant) ? `[${i}]` : ''}.offers`, v);
    });
    for (const x of w.offeredBy.get(f.node) ?? []) out.push({ offer: x.offer, path: x.path });
    return out;
  };

  const top = items.filter((f) => !f.nested && !f.inList && !f.variantOf);
  const pageUrl = ctx.pageUrl;
  const urlOf = (f: Found): string | undefined => str(f.node.url) ?? str(f.node['@id']);
  const main =
    (pageUrl &&
      top.find((f) => samePage(urlOf(f), pageUrl) || offersOf(f).some((o) => samePage(str(o.offer.url), pageUrl)))) ||
    top.find((f) => f.mainEntity) ||
    top.find((f) => offersOf(f).length > 0) ||
    top[0];

  const nameOf = (f: Found): string => quote(str(f.node.name) ?? typesOf(f.node)[0] ?? 'product', 40);
  const sameProduct = (a: Found, b: Found): boolean => {
    if (a.node === b.node) return true;
    const sku = str(a.node.sku);
    if (sku && sku === str(b.node.sku)) return true;
    const name = str(a.node.name)?.trim().toLowerCase();
    if (name && name === str(b.node.name)?.trim().toLowerCase()) return true;
    const u = urlOf(a);
    return !!u && samePage(u, pageUrl ?? safeUrl(urlOf(b)));
  };

  const pageVariant = variantParam(pageUrl?.href);
  const entries = (f: Found, productRank: number, ignored?: string): Entry[] => {
    const out: Entry[] = [];
    const label = `(${typesOf(f.node)[0] === 'productgroup' ? 'ProductGroup' : 'Product'} ${nameOf(f)})`;
    offersOf(f).forEach((ref, offerIndex) => {
      const o = ref.offer;
      const isAgg = typesOf(o).includes('aggregateoffer');
      const currency =
        normaliseCurrencyCode(o.priceCurrency) ?? normaliseCurrencyCode(ref.parent?.priceCurrency) ?? undefined;
      const availability: Availability | undefined =
        availabilityFromValue(o.availability) ??
        availabilityFromValue(ref.parent?.availability) ??
        availabilityFromValue(f.node.availability);
      const url = str(o.url) ?? str(ref.variant?.url);
      const variantMatch = pageVariant !== undefined && variantParam(url, pageUrl) === pageVariant ? 0 : 1;
      const base = [productRank, variantMatch];
      const push = (
        value: unknown,
        field: string,
        tier: number,
        sub: number,
        opts: { currency?: string; ignored?: string; high?: unknown } = {},
      ): void => {
        if (value === undefined || value === null || value === '') return;
        const cur = opts.currency ?? currency;
        const read = readMachinePrice(value, cur);
        const detail = `JSON-LD #${f.block + 1} ${field} ${label}`;
        if (!read.ok) {
          notes.push(`${detail}: ${quote(rawText(value))} is not usable (${read.reason})`);
          return;
        }
        if (opts.high !== undefined && !read.range) {
          const high = readMachinePrice(opts.high, cur);
          if (high.ok) read.range = { low: read.price, high: high.price };
        }
        const c = makeCandidate({
          source: 'json-ld',
          detail,
          raw: rawText(value),
          read,
          currency: cur,
          availability,
          ignored: ignored ?? opts.ignored,
        });
        out.push({ c, rank: [...base, tier, AVAILABILITY_RANK[availability ?? 'unknown'], offerIndex, sub] });
      };
      if (isAgg) {
        push(o.price, `${ref.path}.price`, 2, 0);
        push(o.lowPrice, `${ref.path}.lowPrice`, 3, 0, { high: o.highPrice });
        return;
      }
      const specs = asArray(o.priceSpecification).map(deref).filter(isObject);
      const hasCurrent =
        (o.price !== undefined && o.price !== null && o.price !== '') ||
        specs.some((s) => {
          const t = (str(s.priceType)?.split(/[/#:]/).pop() ?? '').toLowerCase();
          return s.price !== undefined && !NOT_CURRENT.has(t) && t !== 'listprice' && !isUnitSpec(s);
        });
      push(o.price, `${ref.path}.price`, 0, 0);
      specs.forEach((s, i) => {
        const t = (str(s.priceType)?.split(/[/#:]/).pop() ?? '').toLowerCase();
        const field = `${ref.path}.priceSpecification${Array.isArray(o.priceSpecification) ? `[${i}]` : ''}.price${t ? ` [${str(s.priceType)?.split(/[/#:]/).pop()}]` : ''}`;
        const cur = normaliseCurrencyCode(s.priceCurrency) ?? currency;
        let ignoredWhy: string | undefined;
        if (isUnitSpec(s)) ignoredWhy = 'a unit price (per reference quantity), not the item price';
        else if (NOT_CURRENT.has(t)) ignoredWhy = 'a list/strikethrough price, not the current price';
        else if (t === 'listprice' && hasCurrent) ignoredWhy = 'the list price; the offer has a current price';
        push(s.price ?? s.minPrice, field, 0, t === 'saleprice' ? 1 : t === 'listprice' ? 3 : 2, {
          currency: cur,
          ignored: ignoredWhy,
        });
      });
      if (o.price === undefined && o.lowPrice !== undefined)
        push(o.lowPrice, `${ref.path}.lowPrice`, 3, 0, { high: o.highPrice });
    });
    return out;
  };

  const mainEntries = main ? entries(main, 0) : [];
  // When the page URL names a variant that an offer matches, the other offers are other variants.
  if (mainEntries.some((e) => e.rank[1] === 0)) {
    for (const e of mainEntries) {
      if (e.rank[1] !== 0 && !e.c.ignored) e.c.ignored = `another variant; the page URL names variant ${pageVariant}`;
    }
  }
  const all: Entry[] = [...mainEntries];
  let others = 0;
  let skipped = 0;
  for (const f of items) {
    if (f === main || f.node === main?.node || (main && f.variantOf === main.node)) continue;
    const dup = main !== undefined && !f.nested && !f.inList && !f.variantOf && sameProduct(f, main);
    // A second description of the same product (one per size, as some shops write it) offers the
    // same thing: its offers rank with the main product's, so an in-stock size comes first.
    const list = dup ? entries(f, 0) : entries(f, 2, `another product's price (${nameOf(f)})`);
    if (!dup && list.length) {
      if (others >= MAX_OTHER) {
        skipped += list.length;
        continue;
      }
      others++;
    }
    all.push(...list);
  }
  if (skipped) notes.push(`JSON-LD: ${skipped} more prices of other products not listed`);
  const eligible = all.filter((e) => !e.c.ignored).sort((a, b) => compareRanks(a.rank, b.rank));
  const rest = all.filter((e) => e.c.ignored);
  const candidates = [...eligible, ...rest].map((e) => e.c);

  const mainOffers = main ? offersOf(main) : [];
  const first = eligible[0]?.c;
  const availability =
    first?.availability ??
    combineAvailability(mainOffers.map((r) => availabilityFromValue(r.offer.availability))) ??
    (main ? availabilityFromValue(main.node.availability) : undefined);
  const currency = first?.currency ?? mainOffers.map((r) => normaliseCurrencyCode(r.offer.priceCurrency)).find(Boolean);

  let missing: string | undefined;
  if (!main) missing = 'JSON-LD lists products (ItemList) but describes no single product';
  else if (mainOffers.length === 0) missing = `JSON-LD Product ${nameOf(main)} has no offers`;
  else if (!first) missing = `JSON-LD Product ${nameOf(main)} has no usable offer price`;
  return { candidates, availability, currency, notes, missing };
}

function safeUrl(u: string | undefined): URL | undefined {
  try {
    return u ? new URL(u) : undefined;
  } catch {
    return undefined;
  }
}

function isUnitSpec(s: JsonObject): boolean {
  const q = s.referenceQuantity;
  if (!isObject(q)) return false;
  const value = typeof q.value === 'number' ? q.value : typeof q.value === 'string' ? Number(q.value) : 1;
  const unit = str(q.unitCode) ?? str(q.unitText);
  return value !== 1 || (unit !== undefined && !/^(?:C62|H87|EA|piece|pcs?|unit|item|stück|stk)$/i.test(unit));
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
}
