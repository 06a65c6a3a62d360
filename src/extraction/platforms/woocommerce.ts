/**
 * WooCommerce: the single-product summary's `.price` (`.summary .price`), read without its
 * `<del>` (the regular price when on sale) and screen-reader labels, so "<del>£20</del>
 * <ins>£15</ins>" reads £15 and a variable product's "£10 – £20" reads £10 as a range. Stock from
 * the summary's `.stock` (`in-stock`, `out-of-stock`, `available-on-backorder`), else the product
 * container's `instock` / `outofstock` / `onbackorder` class.
 */
import { availabilityFromText, availabilityFromValue, type Availability } from '../availability.js';
import type { PageScan } from '../scan.js';
import { makeCandidate, quote, readTextPrice, type SourceContext, type SourceResult } from '../source.js';
import { hasClass } from '../text.js';
import type { Candidate } from '../types.js';

export function fromWooCommerce(scan: PageScan, ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  if (!scan.platform.woocommerce) return { candidates: [], notes };
  let availability: Availability | undefined;
  const stock = scan.wooStock[0];
  if (stock) {
    const cls = stock.attrs.class;
    availability = hasClass(cls, 'out-of-stock')
      ? 'out_of_stock'
      : hasClass(cls, 'available-on-backorder')
        ? 'preorder'
        : hasClass(cls, 'in-stock')
          ? 'in_stock'
          : availabilityFromText(stock.text);
  }
  if (!availability && scan.wooProductClass) {
    const cls = scan.wooProductClass.split(/\s+/);
    availability = cls
      .map((c) => (['instock', 'outofstock', 'onbackorder'].includes(c) ? availabilityFromValue(c) : undefined))
      .find(Boolean);
  }
  const candidates: Candidate[] = [];
  const el = scan.wooPrices.find((e) => e.text);
  if (el) {
    const read = readTextPrice(el.text, ctx.hints);
    if (read.ok) {
      candidates.push(
        makeCandidate({
          source: 'platform:woocommerce',
          detail: '.summary .price (without <del>)',
          raw: el.text,
          read,
          availability,
        }),
      );
    } else notes.push(`WooCommerce .summary .price ${quote(el.text)} is not usable (${read.reason})`);
  }
  return {
    candidates,
    availability,
    notes,
    missing: candidates.length ? undefined : 'WooCommerce page without a readable .summary .price',
  };
}
