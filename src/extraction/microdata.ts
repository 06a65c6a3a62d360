/**
 * schema.org in microdata (`itemscope`/`itemtype`/`itemprop`) and RDFa (`typeof`/`property`).
 * A price is read from its `content` attribute first (machine format), then from its visible
 * text; `priceCurrency` and `availability` come from the same offer, else the enclosing product.
 * The main product is the first top-level Product scope holding a price (the one whose `url`
 * is the page's URL, if any says so); prices of other products are listed, never chosen. Prices
 * outside any Product are chosen only when they all agree.
 */
import { availabilityFromValue, type Availability } from './availability.js';
import { normaliseCurrencyCode } from '../money/currency.js';
import type { MicroProp, MicroScope, PageScan } from './scan.js';
import {
  AVAILABILITY_RANK,
  combineAvailability,
  makeCandidate,
  quote,
  readMachinePrice,
  readTextPrice,
  samePage,
  type SourceContext,
  type SourceResult,
} from './source.js';
import type { Candidate } from './types.js';
import { compareDecimals } from '../money/decimal.js';

const NOT_CURRENT: ReadonlySet<string> = new Set([
  'strikethroughprice',
  'msrp',
  'srp',
  'invoiceprice',
  'minimumadvertisedprice',
]);

function isProductType(type: string): boolean {
  const t = type.toLowerCase();
  return (
    t.endsWith('product') ||
    t.endsWith('productgroup') ||
    t.endsWith('productmodel') ||
    ['vehicle', 'car', 'book'].includes(t)
  );
}

export function fromMicrodata(scan: PageScan, ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  const { scopes, props } = scan;
  const priceProps = props.filter((p) => p.name === 'price' || p.name === 'lowprice');
  const propText = (p: MicroProp | undefined): string | undefined => p?.value ?? p?.el?.text;
  if (priceProps.length === 0) {
    const availability = combineAvailability(
      props.filter((p) => p.name === 'availability').map((p) => availabilityFromValue(propText(p))),
    );
    return { candidates: [], notes, availability, missing: 'no itemprop=price' };
  }

  const scopeAt = (id: number): MicroScope | undefined => (id >= 0 ? scopes[id] : undefined);
  const productOf = (id: number): number => {
    for (let s = scopeAt(id); s; s = scopeAt(s.parent)) if (isProductType(s.type)) return s.id;
    return -1;
  };
  const topProductOf = (id: number): number => {
    let top = -1;
    for (let s = scopeAt(id); s; s = scopeAt(s.parent)) if (isProductType(s.type)) top = s.id;
    return top;
  };
  const byScope = new Map<number, MicroProp[]>();
  for (const p of props) {
    const list = byScope.get(p.scope) ?? [];
    list.push(p);
    byScope.set(p.scope, list);
  }
  /** The nearest value of a property, from the scope up to (and including) its product. */
  const inherited = (scope: number, name: string): MicroProp | undefined => {
    for (let s = scopeAt(scope); s; s = scopeAt(s.parent)) {
      const hit = byScope.get(s.id)?.find((p) => p.name === name);
      if (hit) return hit;
      if (isProductType(s.type)) break;
    }
    return scope === -1 ? byScope.get(-1)?.find((p) => p.name === name) : undefined;
  };

  // Main product: the first top-level Product with a price, preferring one whose url is this page.
  const productsWithPrice: number[] = [];
  for (const p of priceProps) {
    const top = topProductOf(p.scope);
    if (top >= 0 && !productsWithPrice.includes(top)) productsWithPrice.push(top);
  }
  const main =
    productsWithPrice.find((id) => samePage(propText(byScope.get(id)?.find((p) => p.name === 'url')), ctx.pageUrl)) ??
    productsWithPrice[0];
  const nameOf = (id: number): string =>
    quote(propText(byScope.get(id)?.find((p) => p.name === 'name')) ?? scopes[id]?.type ?? 'product', 40);

  interface Entry {
    c: Candidate;
    rank: number[];
    product: number;
  }
  const entries: Entry[] = [];
  for (const [order, p] of priceProps.entries()) {
    const scope = scopeAt(p.scope);
    const product = productOf(p.scope);
    const top = topProductOf(p.scope);
    const currencyProp = inherited(p.scope, 'pricecurrency');
    const currency = normaliseCurrencyCode(propText(currencyProp));
    const availability: Availability | undefined = availabilityFromValue(propText(inherited(p.scope, 'availability')));
    const priceType = (
      propText(byScope.get(p.scope)?.find((x) => x.name === 'pricetype'))
        ?.split(/[/#:]/)
        .pop() ?? ''
    ).toLowerCase();
    const attrName = p.source === 'microdata' ? 'itemprop' : 'property';
    const fieldName = p.name === 'lowprice' ? 'lowPrice' : 'price';
    const where = `${scope ? `in ${scope.type || 'item'}` : 'outside any item'}${product >= 0 ? ` (${scopeAt(product)?.type} ${nameOf(product)})` : ''}`;
    const detail = `${attrName}="${fieldName}" ${p.attr ?? 'text'} ${where}`;
    const raw = p.value ?? p.el?.text ?? '';
    const read =
      p.value !== undefined
        ? readMachinePrice(p.value, currency)
        : readTextPrice(raw, { ...ctx.hints, currency: currency ?? ctx.hints.currency });
    if (!read.ok) {
      notes.push(`${detail}: ${quote(raw)} is not usable (${read.reason})`);
      continue;
    }
    if (p.name === 'lowprice' && !read.range) {
      const high = propText(byScope.get(p.scope)?.find((x) => x.name === 'highprice'));
      const h = high !== undefined ? readMachinePrice(high, currency) : undefined;
      if (h?.ok) read.range = { low: read.price, high: h.price };
    }
    let ignored: string | undefined;
    if (NOT_CURRENT.has(priceType)) ignored = 'a list/strikethrough price, not the current price';
    else if (main !== undefined && top !== main) {
      ignored = top >= 0 ? `another product's price (${nameOf(top)})` : "a price outside the page's main Product";
    }
    const isAgg = scope?.type.toLowerCase() === 'aggregateoffer';
    const tier = p.name === 'lowprice' ? 3 : isAgg ? 2 : priceType === 'listprice' ? 4 : 0;
    const c = makeCandidate({ source: p.source, detail, raw, read, currency, availability, ignored });
    entries.push({ c, rank: [tier, AVAILABILITY_RANK[availability ?? 'unknown'], order], product: top });
  }

  if (main === undefined) {
    // No Product: prices outside any product count only when they all say the same.
    const live = entries.filter((e) => !e.c.ignored);
    const first = live[0];
    if (
      first &&
      !live.every((e) => compareDecimals(e.c.price, first.c.price) === 0 && e.c.currency === first.c.currency)
    ) {
      for (const e of live) e.c.ignored = 'one of several different itemprop=price values outside any Product';
    }
  } else if (entries.some((e) => e.product === main && !e.c.ignored && e.rank[0] !== 4)) {
    for (const e of entries)
      if (e.product === main && e.rank[0] === 4 && !e.c.ignored)
        e.c.ignored = 'the list price; the product has a current price';
  }
  const eligible = entries.filter((e) => !e.c.ignored).sort((a, b) => cmp(a.rank, b.rank));
  const candidates = [...eligible, ...entries.filter((e) => e.c.ignored)].map((e) => e.c);
  const first = eligible[0]?.c;
  const mainAvail =
    main !== undefined
      ? combineAvailability(
          props
            .filter((p) => p.name === 'availability' && topProductOf(p.scope) === main)
            .map((p) => availabilityFromValue(propText(p))),
        )
      : undefined;
  return {
    candidates,
    availability: first?.availability ?? mainAvail,
    currency: first?.currency,
    notes,
    missing: first
      ? undefined
      : main !== undefined
        ? `microdata Product ${nameOf(main)} has no usable price`
        : 'no itemprop=price for a single product',
  };
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
}
