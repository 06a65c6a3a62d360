/**
 * Magento 2: price boxes carry the amount as data: `[data-price-amount]` with
 * `data-price-type="finalPrice"` is what the customer pays; `oldPrice` is the struck regular
 * price and `basePrice` the amount excluding tax (both listed, not chosen). Prices inside
 * `.product-info-main` belong to the product; elsewhere (related, upsell blocks) they are only
 * trusted if they all agree. Currency from the box's visible text. Stock from
 * `.product-info-main .stock.available` / `.stock.unavailable`.
 */
import { availabilityFromText, type Availability } from '../availability.js';
import { F_MAGENTO_MAIN, type PageScan } from '../scan.js';
import {
  makeCandidate,
  quote,
  readMachinePrice,
  readTextPrice,
  type SourceContext,
  type SourceResult,
} from '../source.js';
import { hasClass } from '../text.js';
import type { Candidate } from '../types.js';
import { orderEligibleFirst, requireAgreement } from './common.js';

const NOT_FINAL: Readonly<Record<string, string>> = {
  oldPrice: 'the old (regular) price',
  basePrice: 'the price excluding tax',
  msrpPrice: "the manufacturer's suggested price",
};

export function fromMagento(scan: PageScan, ctx: SourceContext): SourceResult {
  const notes: string[] = [];
  const prices = scan.magentoPrices;
  let availability: Availability | undefined;
  const stock = scan.magentoStock[0];
  if (stock) {
    const cls = stock.attrs.class;
    availability = hasClass(cls, 'unavailable')
      ? 'out_of_stock'
      : hasClass(cls, 'available')
        ? 'in_stock'
        : availabilityFromText(stock.text);
  }
  if (prices.length === 0)
    return {
      candidates: [],
      availability,
      notes,
      missing: scan.platform.magento ? 'Magento page without [data-price-amount]' : undefined,
    };
  const inMain = prices.filter((e) => e.flags & F_MAGENTO_MAIN);
  const pool = inMain.length ? inMain : prices;
  const candidates: Candidate[] = [];
  for (const e of pool.slice(0, 20)) {
    const amount = e.attrs['data-price-amount'] ?? '';
    const type = e.attrs['data-price-type'] ?? '';
    const symbol = e.text ? readTextPrice(e.text, ctx.hints) : undefined;
    const currency = symbol?.ok ? symbol.currency : undefined;
    const read = readMachinePrice(amount, currency ?? ctx.hints.currency);
    const detail = `${inMain.length ? '.product-info-main ' : ''}[data-price-type="${type}"][data-price-amount]`;
    if (!read.ok) {
      notes.push(`Magento ${detail} ${quote(amount)} is not usable (${read.reason})`);
      continue;
    }
    const ignored = NOT_FINAL[type] ?? (type && type !== 'finalPrice' ? `price type ${type}` : undefined);
    candidates.push(
      makeCandidate({
        source: 'platform:magento',
        detail,
        raw: amount,
        read,
        currency,
        ignored,
        availability: inMain.length ? availability : undefined,
      }),
    );
  }
  if (!inMain.length)
    requireAgreement(candidates, 'one of several different Magento prices outside .product-info-main');
  const ordered = orderEligibleFirst(candidates);
  return {
    candidates: ordered,
    availability,
    notes,
    missing: ordered[0] && !ordered[0].ignored ? undefined : 'Magento prices but none for this product',
  };
}
