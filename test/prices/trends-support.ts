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
