/**
 * Shopify: the product JSON themes embed (`<script type="application/json" data-product-json>`,
 * `id="ProductJson-..."`, variant pickers' JSON; prices in cents, with `available`), the
 * `var meta = {...}` of ShopifyAnalytics (variant prices in cents, no stock), and the theme's
 * price block (Dawn/Debut `.price-item--sale` when the box is `.price--on-sale`, else
 * `.price__regular .price-item--regular`). The variant is the one the page URL's `?variant=`
 * names, else the first available one, else the first; other variants are listed as ignored.
 */
import { type Availability } from '../availability.js';
import { normaliseCurrencyCode } from '../../money/currency.js';
import { decimalFromMinorUnits, decimalFromPlainString, compareDecimals } from '../../money/decimal.js';
import { isObject, jsonObjectAt, type JsonObject } from '../json.js';
import { F_PRICE_REGULAR, F_SHOPIFY_MAIN, type PageScan, type ScanElement } from '../scan.js';
import {
  makeCandidate,
  quote,
  rawText,
  readTextPrice,
  variantParam,
  type SourceContext,
  type SourceResult,
  type ValueRead,
} from '../source.js';
import { hasClass } from '../text.js';
import type { Candidate } from '../types.js';
import { orderEligibleFirst, requireAgreement } from './common.js';

/** Shopify money in JSON: an integer number of cents, or (some apps) a decimal string. */
function readMoney(v: unknown): ValueRead {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) {
    const d = decimalFromMinorUnits(v, 2);
    return d.ok ? { ok: true, price: d.value, notes: [] } : { ok: false, reason: d.reason };
  }
  if (typeof v === 'string') {
    const d = decimalFromPlainString(v);
    return d.ok ? { ok: true, price: d.value, notes: [] } : { ok: false, reason: d.reason };
  }
  return { ok: false, reason: 'no price' };
}

function variantsOf(v: unknown): JsonObject[] | undefined {
  // Dawn's variant picker embeds the bare variant array.
  if (Array.isArray(v)) return v.filter(isObject).filter((x) => x.id !== undefined && x.price !== undefined);
  if (!isObject(v)) return undefined;
  const product = isObject(v.product) && Array.isArray(v.product.variants) ? v.product : v;
  return Array.isArray(product.variants) ? product.variants.filter(isObject) : undefined;
}

function variantLabel(v: JsonObject): string {
  const title =
    typeof v.public_title === 'string'
      ? v.public_title
      : typeof v.title === 'string'
        ? v.title
        : typeof v.name === 'string'
          ? v.name
          : undefined;
  return `variant ${rawText(v.id)}${title ? ` ${quote(title, 30)}` : ''}`;
}

export function fromShopify(scan: PageScan, ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  let currency: string | undefined;
  for (const s of scan.scripts) {
    const m =
      /ShopifyAnalytics\.meta\.currency\s*=\s*['"]([A-Za-z]{3})['"]/.exec(s) ??
      /Shopify\.currency\s*=\s*\{[^}]*?["']?active["']?\s*:\s*["']([A-Za-z]{3})["']/.exec(s);
    currency = normaliseCurrencyCode(m?.[1]);
    if (currency) break;
  }
  const pageVariant = variantParam(ctx.pageUrl?.href);
  let availability: Availability | undefined;
  let selectedId: string | undefined;

  // Product JSON embedded by the theme.
  for (const js of scan.jsonScripts) {
    const flagged = js.attrs['data-product-json'] !== undefined || /^ProductJson/i.test(js.attrs.id ?? '');
    if (!flagged && !(scan.platform.shopify && /"(?:variants|price)"/.test(js.text))) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(js.text);
    } catch {
      notes.push('Shopify product JSON is not valid JSON and was ignored');
      continue;
    }
    const variants = variantsOf(parsed);
    if (!variants?.length || !variants.some((v) => v.price !== undefined)) continue;
    const selected =
      variants.find((v) => pageVariant !== undefined && String(v.id) === pageVariant) ??
      variants.find((v) => v.available === true) ??
      variants[0];
    selectedId = selected ? String(selected.id) : undefined;
    const where = js.attrs.id ? `script#${js.attrs.id}` : 'product JSON';
    variants.forEach((v, i) => {
      const read = readMoney(v.price);
      if (!read.ok) return;
      const avail: Availability | undefined =
        v.available === true ? 'in_stock' : v.available === false ? 'out_of_stock' : undefined;
      const isSelected = v === selected;
      const c = makeCandidate({
        source: 'platform:shopify',
        detail: `${where} variants[${i}].price (${variantLabel(v)}, in cents)`,
        raw: rawText(v.price),
        read,
        currency,
        availability: avail,
        ignored: isSelected
          ? undefined
          : `another variant; add ?variant=${rawText(v.id)} to the listing URL to track it`,
      });
      candidates.push(c);
      if (isSelected) {
        availability = avail;
        const compare = readMoney(v.compare_at_price);
        if (compare.ok && compareDecimals(compare.price, read.price) > 0) {
          candidates.push(
            makeCandidate({
              source: 'platform:shopify',
              detail: `${where} variants[${i}].compare_at_price`,
              raw: rawText(v.compare_at_price),
              read: compare,
              currency,
              ignored: 'the compare-at (list) price',
            }),
          );
        }
      }
    });
    break;
  }

  // ShopifyAnalytics: var meta = {"product":{"variants":[{"id":..,"price":129900,...}]}}
  for (const s of scan.scripts) {
    const at = s.search(/var\s+meta\s*=\s*\{/);
    if (at === -1) continue;
    const r = jsonObjectAt(s, at);
    if (!r.ok) {
      notes.push(`ShopifyAnalytics meta is not readable (${r.reason})`);
      continue;
    }
    const variants = variantsOf(r.value);
    if (!variants?.length) continue;
    const want = pageVariant ?? selectedId;
    const selected = variants.find((v) => want !== undefined && String(v.id) === want) ?? variants[0];
    variants.forEach((v, i) => {
      const read = readMoney(v.price);
      if (!read.ok) return;
      const isSelected = v === selected;
      // Variants are listed once: from the product JSON when there is one.
      if (!isSelected && selectedId !== undefined) return;
      candidates.push(
        makeCandidate({
          source: 'platform:shopify',
          detail: `ShopifyAnalytics meta product.variants[${i}].price (${variantLabel(v)}, in cents)`,
          raw: rawText(v.price),
          read,
          currency,
          ignored: isSelected
            ? undefined
            : `another variant; add ?variant=${rawText(v.id)} to the listing URL to track it`,
        }),
      );
    });
    break;
  }

  // The theme's price block: in the main product section if the theme marks one, else every
  // price box on the page (trusted only if they agree).
  const items = scan.shopifyPrices.filter((e) => e.text);
  const inMain = items.filter((e) => e.flags & F_SHOPIFY_MAIN);
  const boxes = new Map<number, ScanElement[]>();
  for (const e of inMain.length ? inMain : items) {
    const id = e.priceBox?.id ?? -1;
    boxes.set(id, [...(boxes.get(id) ?? []), e]);
  }
  const dom: Candidate[] = [];
  let soldOut = false;
  for (const els of [...boxes.values()].slice(0, inMain.length ? 1 : 20)) {
    const box = els[0]?.priceBox?.cls;
    const onSale = hasClass(box, 'price--on-sale');
    soldOut ||= hasClass(box, 'price--sold-out');
    const e = onSale
      ? els.find((x) => hasClass(x.attrs.class, 'price-item--sale'))
      : (els.find((x) => x.flags & F_PRICE_REGULAR && hasClass(x.attrs.class, 'price-item--regular')) ?? els[0]);
    if (!e) continue;
    const field = onSale ? '.price--on-sale .price-item--sale' : '.price__regular .price-item--regular';
    const read = readTextPrice(e.text, { ...ctx.hints, currency: currency ?? ctx.hints.currency });
    if (!read.ok) {
      notes.push(`Shopify ${field} ${quote(e.text)} is not usable (${read.reason})`);
      continue;
    }
    dom.push(
      makeCandidate({
        source: 'platform:shopify',
        detail: `${inMain.length ? 'main product ' : ''}${field}`,
        raw: e.text,
        read,
      }),
    );
  }
  if (!inMain.length) requireAgreement(dom, 'one of several different Shopify prices outside the main product block');
  candidates.push(...dom);
  if (!availability && soldOut && inMain.length) availability = 'out_of_stock';

  const first = candidates.find((c) => !c.ignored);
  return {
    candidates: orderEligibleFirst(candidates),
    availability,
    currency,
    notes,
    missing: first ? undefined : scan.platform.shopify ? 'Shopify markup without a readable product price' : undefined,
  };
}
