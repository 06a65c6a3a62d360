/**
 * BigCommerce (Stencil themes): `var BCData = {"product_attributes": {"price": {"with_tax":
 * {"value": ..., "currency": ...}, "without_tax": ...}, "instock": ..., "purchasable": ...}}`
 * first, then the product view's `[data-product-price-with-tax]` / `[data-product-price-without-tax]`
 * text. The price including tax is preferred (what a shopper sees where tax is shown); RRP and
 * non-sale prices are listed, never chosen.
 */
import { type Availability } from '../availability.js';
import { normaliseCurrencyCode } from '../../money/currency.js';
import { isObject, jsonObjectAt, type JsonObject } from '../json.js';
import { F_BC_MAIN, type PageScan } from '../scan.js';
import {
  makeCandidate,
  quote,
  rawText,
  readMachinePrice,
  readTextPrice,
  type SourceContext,
  type SourceResult,
} from '../source.js';
import type { Candidate } from '../types.js';
import { orderEligibleFirst, requireAgreement } from './common.js';

const DOM_FIELDS: ReadonlyArray<{ attr: string; ignored?: string }> = [
  { attr: 'data-product-price-with-tax' },
  { attr: 'data-product-price-without-tax' },
  { attr: 'data-product-rrp-with-tax', ignored: 'the recommended retail price' },
  { attr: 'data-product-rrp-without-tax', ignored: 'the recommended retail price' },
  { attr: 'data-product-non-sale-price-with-tax', ignored: 'the price before the sale' },
  { attr: 'data-product-non-sale-price-without-tax', ignored: 'the price before the sale' },
];

const BC_FIELDS: ReadonlyArray<{ field: string; ignored?: string }> = [
  { field: 'with_tax' },
  { field: 'without_tax' },
  { field: 'rrp_with_tax', ignored: 'the recommended retail price' },
  { field: 'rrp_without_tax', ignored: 'the recommended retail price' },
  { field: 'non_sale_price_with_tax', ignored: 'the price before the sale' },
  { field: 'non_sale_price_without_tax', ignored: 'the price before the sale' },
];

export function fromBigCommerce(scan: PageScan, ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  let availability: Availability | undefined;
  let currency: string | undefined;

  for (const s of scan.scripts) {
    const at = s.search(/BCData\s*=\s*\{/);
    if (at === -1) continue;
    const r = jsonObjectAt(s, at);
    if (!r.ok || !isObject(r.value)) {
      notes.push(`BCData is not readable (${r.ok ? 'not an object' : r.reason})`);
      continue;
    }
    const attrs = r.value.product_attributes;
    if (!isObject(attrs)) continue;
    if (attrs.instock === false || attrs.purchasable === false) availability = 'out_of_stock';
    else if (attrs.instock === true) availability = 'in_stock';
    const price = isObject(attrs.price) ? attrs.price : undefined;
    for (const { field, ignored } of BC_FIELDS) {
      const p = price?.[field];
      if (!isObject(p)) continue;
      const value = (p as JsonObject).value;
      if (value === undefined || value === null) continue;
      const cur = normaliseCurrencyCode((p as JsonObject).currency);
      currency ??= cur;
      const read = readMachinePrice(value, cur);
      if (!read.ok) {
        notes.push(`BCData ${field}.value ${quote(rawText(value))} is not usable (${read.reason})`);
        continue;
      }
      candidates.push(
        makeCandidate({
          source: 'platform:bigcommerce',
          detail: `BCData.product_attributes.price.${field}.value`,
          raw: rawText(value),
          read,
          currency: cur,
          availability,
          ignored,
        }),
      );
    }
    break;
  }

  const inMain = scan.bcPrices.filter((e) => e.flags & F_BC_MAIN);
  const pool = inMain.length ? inMain : scan.bcPrices;
  const dom: Candidate[] = [];
  for (const { attr, ignored } of DOM_FIELDS) {
    const field: Candidate[] = [];
    for (const e of pool.filter((x) => x.attrs[attr] !== undefined && x.text).slice(0, inMain.length ? 1 : 20)) {
      const read = readTextPrice(e.text, { ...ctx.hints, currency: currency ?? ctx.hints.currency });
      if (!read.ok) {
        notes.push(`BigCommerce [${attr}] ${quote(e.text)} is not usable (${read.reason})`);
        continue;
      }
      field.push(
        makeCandidate({
          source: 'platform:bigcommerce',
          detail: `${inMain.length ? '.productView ' : ''}[${attr}]`,
          raw: e.text,
          read,
          ignored,
        }),
      );
    }
    if (!inMain.length) requireAgreement(field, 'one of several different BigCommerce prices outside .productView');
    dom.push(...field);
  }
  candidates.push(...dom);
  const ordered = orderEligibleFirst(candidates);
  return {
    candidates: ordered,
    availability,
    currency,
    notes,
    missing:
      ordered[0] && !ordered[0].ignored
        ? undefined
        : scan.platform.bigcommerce
          ? 'BigCommerce page without a readable product price'
          : undefined,
  };
}
