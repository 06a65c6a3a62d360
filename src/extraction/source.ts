/** What every extraction source returns, and helpers for turning values into candidates. */
import { inStockOf, type Availability } from './availability.js';
import { decimalFromNumber, isZeroDecimal } from '../money/decimal.js';
import { parsePrice, type PriceHints, type PriceParseResult } from './parse-price.js';
import type { Period } from './price-words.js';
import type { Candidate, CandidateSource } from './types.js';

export interface SourceContext {
  /** The page's URL (listing URL) or, failing that, its canonical link. */
  pageUrl?: URL;
  /** Hints for reading visible text: the page's currency and the listing's locale. */
  hints: PriceHints;
}

export interface SourceResult {
  candidates: Candidate[];
  /** Stock state of the page's product according to this source. */
  availability?: Availability;
  /** The currency this source states for the page's product. */
  currency?: string;
  notes: string[];
  /** What this source lacked, for the failure message ("no JSON-LD", "no itemprop=price"). */
  missing?: string;
}

export type ValueRead =
  | {
      ok: true;
      price: string;
      currency?: string;
      range?: { low: string; high: string };
      from?: boolean;
      period?: Period;
      notes: string[];
    }
  | { ok: false; reason: string };

/**
 * A machine-written price (JSON-LD, microdata content, meta content, data attributes): a JSON
 * number keeps its shortest decimal text; a string is read with '.' as the decimal separator
 * as schema.org prescribes, but "1.299,00" or "$1,299.00" still read right.
 */
export function readMachinePrice(value: unknown, currency?: string): ValueRead {
  if (typeof value === 'number') {
    const d = decimalFromNumber(value);
    return d.ok ? { ok: true, price: d.value, notes: [] } : { ok: false, reason: `${value} ${d.reason}` };
  }
  if (typeof value !== 'string')
    return { ok: false, reason: `${JSON.stringify(value) ?? String(value)} is not a price` };
  return fromParsed(parsePrice(value, { currency, decimal: '.' }));
}

function fromParsed(p: PriceParseResult): ValueRead {
  if (!p.ok) return p;
  // An old price on its own ("UVP 12,99 €") is no price to record.
  if (p.old) return { ok: false, reason: p.notes[0] as string };
  return {
    ok: true,
    price: p.amount,
    currency: p.currency,
    range: p.range,
    from: p.from,
    period: p.period,
    notes: p.notes,
  };
}

/** Visible text, read with the page's currency and the listing's locale as hints. */
export function readTextPrice(text: string, hints: PriceHints): ValueRead {
  return fromParsed(parsePrice(text, hints));
}

export interface CandidateInput {
  source: CandidateSource;
  detail: string;
  raw: string;
  read: Extract<ValueRead, { ok: true }>;
  /** Currency the source states beside the price; wins over a symbol in the text. */
  currency?: string;
  availability?: Availability;
  ignored?: string;
}

export function makeCandidate(c: CandidateInput): Candidate {
  const out: Candidate = { price: c.read.price, source: c.source, detail: c.detail, raw: c.raw };
  const currency = c.currency ?? c.read.currency;
  if (currency) out.currency = currency;
  if (c.availability) {
    out.availability = c.availability;
    const s = inStockOf(c.availability);
    if (s !== undefined) out.inStock = s;
  }
  if (c.read.range) out.range = c.read.range;
  if (c.read.from) out.from = true;
  if (c.read.period) out.period = c.read.period;
  const ignored =
    c.ignored ??
    (isZeroDecimal(c.read.price) ? 'a zero price, usually a placeholder for "price on request"' : undefined);
  if (ignored) out.ignored = ignored;
  return out;
}

export function rawText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

/** Same page, ignoring scheme, "www.", query, fragment and a trailing slash. */
export function samePage(a: string | undefined, base: URL | undefined): boolean {
  if (!a || !base) return false;
  try {
    const u = new URL(a, base);
    const host = (h: string): string => h.replace(/^www\./, '');
    const path = (p: string): string => decodeURIComponent(p).replace(/\/+$/, '');
    return host(u.hostname) === host(base.hostname) && path(u.pathname) === path(base.pathname);
  } catch {
    return false;
  }
}

/** The `variant` query parameter (Shopify and others) of a URL, if any. */
export function variantParam(url: string | undefined, base?: URL): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url, base ?? 'http://x.invalid/').searchParams.get('variant') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Availability of a product from several offers: any in stock wins, then pre-order, then out of stock. */
export function combineAvailability(values: Array<Availability | undefined>): Availability | undefined {
  if (values.includes('in_stock')) return 'in_stock';
  if (values.includes('preorder')) return 'preorder';
  if (values.includes('out_of_stock')) return 'out_of_stock';
  return undefined;
}

export const AVAILABILITY_RANK: Readonly<Record<Availability, number>> = {
  in_stock: 0,
  unknown: 1,
  preorder: 2,
  out_of_stock: 3,
};

/** Short quoted form of a text for messages. */
export function quote(text: string, max = 60): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(t.length > max ? `${t.slice(0, max - 1)}…` : t);
}
