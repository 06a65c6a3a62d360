import type { TestApp } from '../helpers/app.js';

/** Helpers of the trends and catalogue tests (not a test file itself: no `.test.ts`). */

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface Obs {
  product: string;
  /** null or left out: our own shop. */
  competitor?: string | null;
  price: number;
  currency?: string;
  in_stock?: boolean | null;
  /** How long before the real now it was observed, in milliseconds. */
  ago: number;
  listing?: string | null;
}

/**
 * Inserts observations as any writer would (the trigger keeps price_series), at times relative
 * to `now` (by default the real now), and returns those times by index.
 */
export async function observe(t: TestApp, accountId: string, rows: Obs[], now = Date.now()): Promise<Date[]> {
  const at = rows.map((r) => new Date(now - r.ago));
  await t.rt.db.query(
    `insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source)
     select $1, u.product_id, u.competitor_id, u.listing_id, u.price, u.currency, u.in_stock, u.observed_at, 'api'
       from unnest($2::text[], $3::text[], $4::text[], $5::numeric[], $6::text[], $7::boolean[], $8::timestamptz[])
         as u (product_id, competitor_id, listing_id, price, currency, in_stock, observed_at)`,
    [
      accountId,
      rows.map((r) => r.product),
      rows.map((r) => r.competitor ?? null),
      rows.map((r) => r.listing ?? null),
      rows.map((r) => String(r.price)),
      rows.map((r) => r.currency ?? 'EUR'),
      rows.map((r) => (r.in_stock === undefined ? true : r.in_stock)),
      at.map((d) => d.toISOString()),
    ],
  );
  return at;
}

/** `1 base = rate quote` for the account. */
export async function setRate(t: TestApp, accountId: string, base: string, quote: string, rate: string) {
  await t.rt.db.query(
    `insert into exchange_rates (account_id, base, quote, rate) values ($1, $2, $3, $4::numeric)
     on conflict (account_id, base, quote) do update set rate = excluded.rate`,
    [accountId, base, quote, rate],
  );
}

export interface PriceAtJson {
  price: number;
  at: string;
}
export interface RangeJson {
  average: number | null;
  lowest: PriceAtJson | null;
  highest: PriceAtJson | null;
  current_is_lowest: boolean | null;
  observations: number;
  out_of_stock_share: number | null;
}
export interface ChangeJson {
  from: number | null;
  from_currency: string | null;
  amount: number | null;
  percent: number | null;
}
export interface StatsJson {
  currency: string;
  lowest_ever: PriceAtJson | null;
  highest_ever: PriceAtJson | null;
  ranges: Record<'30d' | '90d' | '180d' | '365d', RangeJson>;
}
export interface SeriesJson {
  price: number;
  currency: string;
  price_in_product_currency: number | null;
  in_stock: boolean | null;
  observed_at: string | null;
  listing_id: string | null;
  price_since: string | null;
  changes: Record<'24h' | '7d' | '30d', ChangeJson> | null;
  stats: StatsJson | null;
}
export interface TrendsJson {
  object: 'product_trends';
  product_id: string;
  currency: string;
  as_of: string;
  own: SeriesJson & { source: 'observation' | 'base_price' };
  comparison: {
    compared: number;
    left_out: { out_of_stock: number; no_rate: number };
    lowest: number | null;
    average: number | null;
    highest: number | null;
    rank: number | null;
    price_index: number | null;
    cheapest: {
      competitor_id: string;
      competitor_name: string;
      price_in_product_currency: number;
      tied: number;
      since: string;
    } | null;
    stock: { in_stock: number; out_of_stock: number; unknown: number };
  };
  competitors: (SeriesJson & {
    competitor_id: string;
    competitor_name: string;
    compared: 'yes' | 'out_of_stock' | 'no_rate';
    observed_at: string;
    price_since: string;
  })[];
}
