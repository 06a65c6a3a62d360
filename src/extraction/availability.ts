import { BUYABLE, IN_STOCK, PREORDER, SOLD_OUT, STORE_ONLY } from './stock-words.js';

/** Stock states as schema.org, Open Graph and shop platforms write them. */
export type Availability = 'in_stock' | 'out_of_stock' | 'preorder' | 'unknown';

const SCHEMA: Readonly<Record<string, Exclude<Availability, 'unknown'>>> = {
  instock: 'in_stock',
  limitedavailability: 'in_stock',
  onlineonly: 'in_stock',
  instoreonly: 'in_stock',
  availablefororder: 'in_stock',
  available: 'in_stock',
  outofstock: 'out_of_stock',
  soldout: 'out_of_stock',
  discontinued: 'out_of_stock',
  oos: 'out_of_stock',
  unavailable: 'out_of_stock',
  preorder: 'preorder',
  presale: 'preorder',
  // Orderable now, shipped later: closest to a pre-order for someone watching stock.
  backorder: 'preorder',
  onbackorder: 'preorder',
  availableonbackorder: 'preorder',
};

/**
 * Reads a structured availability value: schema.org URLs or names ("https://schema.org/InStock",
 * "schema:OutOfStock", "PreOrder"), Open Graph ("in stock", "out of stock", "preorder",
 * "available for order") and WooCommerce classes ("instock", "outofstock", "onbackorder").
 */
export function availabilityFromValue(value: unknown): Exclude<Availability, 'unknown'> | undefined {
  if (typeof value !== 'string') return undefined;
  const last = value.trim().split(/[/#:]/).pop() ?? '';
  return SCHEMA[last.toLowerCase().replace(/[^a-z]/g, '')];
}

/**
 * What a button's label says: sold out (or "notify me"), pre-order, or buy (add to cart). A
 * label that says both buy and sold out is several labels in one element, toggled by the page's
 * script or style ("do koszyka … Produkt niedostępny"): it says neither.
 */
export function buttonLabelKind(label: string): 'sold_out' | 'preorder' | 'buy' | undefined {
  const soldOut = SOLD_OUT.test(label);
  const buy = BUYABLE.test(label);
  if (soldOut) return buy ? undefined : 'sold_out';
  if (PREORDER.test(label)) return 'preorder';
  if (buy) return 'buy';
  return undefined;
}

/** Reads an add-to-cart button's label: "Sold out" / "Ausverkauft" / "Pre-order" / "Add to cart". */
export function availabilityFromButton(label: string, disabled: boolean): Exclude<Availability, 'unknown'> | undefined {
  const kind = buttonLabelKind(label);
  if (kind === 'sold_out') return 'out_of_stock';
  if (kind === 'preorder') return 'preorder';
  if (kind === 'buy') return disabled ? undefined : 'in_stock';
  return undefined;
}

/** Reads a stock message ("In stock", "Out of stock", "Nur noch 3 auf Lager", "Skladem"). */
export function availabilityFromText(text: string): Exclude<Availability, 'unknown'> | undefined {
  if (SOLD_OUT.test(text)) return 'out_of_stock';
  if (PREORDER.test(text)) return 'preorder';
  if (IN_STOCK.test(text)) return 'in_stock';
  return undefined;
}

/** A message about the shop's stores (pickup, reserve in store), which says nothing about buying online. */
export function aboutStores(text: string): boolean {
  return STORE_ONLY.test(text);
}

export function inStockOf(a: Availability | undefined): boolean | undefined {
  return a === 'in_stock' ? true : a === 'out_of_stock' || a === 'preorder' ? false : undefined;
}
