import type { Availability } from './availability.js';
import type { Period } from './price-words.js';

export type { Availability, Period };

/** Where a candidate price came from; the order here is the order of preference. */
export type CandidateSource =
  | 'selector'
  | 'json-ld'
  | 'microdata'
  | 'rdfa'
  | 'meta'
  | 'platform:shopify'
  | 'platform:woocommerce'
  | 'platform:magento'
  | 'platform:bigcommerce'
  | 'visible';

/** Where a price shows on the page: enough to see why it was chosen and to pin it as the selector. */
export interface Evidence {
  /** CSS path to the element; works as the listing's `selector`. */
  path: string;
  /** The element's visible text. */
  text: string;
  /** A short stretch of the text around it. */
  snippet: string;
}

export interface Candidate {
  /** Exact decimal string: "1299.00", "19.99", "12". */
  price: string;
  /** ISO 4217 code, when known. */
  currency?: string;
  source: CandidateSource;
  /** Where in the source: JSON path, CSS selector, meta property, platform field. */
  detail: string;
  /** The value as the page wrote it. */
  raw: string;
  /** Stock state this source gives for this price, when it gives one. */
  availability?: Availability;
  /** true / false when `availability` is known: in stock / out of stock or pre-order. */
  inStock?: boolean;
  /** The price is the low end of a range ("$10 - $20", AggregateOffer lowPrice..highPrice). */
  range?: { low: string; high: string };
  /** The price is a starting price ("From $9.99"). */
  from?: boolean;
  /** The price is charged per period ("$9.99/mo", "€ 99 per year"). */
  period?: Period;
  /**
   * Why this candidate may not be chosen: a list or strikethrough price, another product's
   * price, a zero placeholder, an ambiguous platform block. Absent for eligible candidates.
   */
  ignored?: string;
  /** The visible-price finder's score and signals for this price ("price class, next to the buy button"). */
  reason?: string;
  /** How sure the visible-price finder is of the chosen price, 0 to 1 (visible candidates only). */
  confidence?: number;
  /** Where the price shows on the page (visible candidates, and a structured price the visible page confirms). */
  evidence?: Evidence;
}

export interface ExtractOptions {
  /** The listing's CSS selector for the price element; tried before anything else. */
  selector?: string;
  /** The listing's currency (ISO 4217): replaces the currency of every candidate. */
  currencyOverride?: string;
  /** The page's URL: picks the offer or Shopify variant the URL names (`?variant=`), matches JSON-LD `url`. */
  baseUrl?: string;
  /** Locale whose decimal separator settles "1,299" vs "1.299" in visible text (e.g. "de-DE"). */
  locale?: string;
  /**
   * Read the price the page shows when no structured source gives one, and check the structured
   * price against it (default true; false: structured sources and the selector only).
   */
  visibleFallback?: boolean;
}

export interface Extraction {
  /** The price to record, absent when the page gives no price this engine trusts. */
  chosen?: Candidate;
  /** Every price found, in order of preference; `chosen` is the first one not `ignored`. */
  candidates: Candidate[];
  availability: Availability;
  /** Why nothing was chosen; absent when `chosen` is set. */
  failure?: string;
  /** Things worth knowing: a selector that matched nothing, sources that disagree, broken JSON-LD. */
  notes: string[];
}
