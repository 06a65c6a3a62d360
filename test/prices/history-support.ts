import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { PriceBucket, PriceHistory } from '../helpers/api-types.js';

/** Helpers shared by the history and roll-up tests (not a test file itself: no `.test.ts`). */

export type Headers = Record<string, string>;

export interface Obs {
  competitor?: string | null;
  price: string;
  currency?: string;
  at: string;
  inStock?: boolean | null;
}

export async function account(t: TestApp) {
  const { headers, accountId } = await t.newKey('business');
  const product = await post(t, headers, '/api/v1/products', { name: 'Kettle', base_price: 20, currency: 'EUR' });
  return { headers, accountId, productId: product.id };
}

export async function post(t: TestApp, headers: Headers, url: string, payload: unknown): Promise<{ id: string }> {
  const res = await t.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>();
}

export async function competitor(t: TestApp, headers: Headers, name = 'Shop') {
  return (await post(t, headers, '/api/v1/competitors', { name, website: 'https://shop.example' })).id;
}

/** Observations written straight into the table, in the order given (so out-of-order arrival is the caller's choice). */
export async function insertObservations(t: TestApp, accountId: string, productId: string, rows: Obs[]): Promise<void> {
  await t.rt.db.query(
    `insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
     select $1, $2, u.competitor_id, u.price, u.currency, u.in_stock, u.observed_at, 'api'
       from unnest($3::text[], $4::numeric[], $5::text[], $6::boolean[], $7::timestamptz[]) with ordinality
         as u (competitor_id, price, currency, in_stock, observed_at, n)
      order by u.n`,
    [
      accountId,
      productId,
      rows.map((r) => r.competitor ?? null),
      rows.map((r) => r.price),
      rows.map((r) => r.currency ?? 'EUR'),
      rows.map((r) => r.inStock ?? null),
      rows.map((r) => r.at),
    ],
  );
}

export async function history(t: TestApp, headers: Headers, productId: string, query: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices?${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<PriceHistory>();
}

/** A bucket holding a single price. */
export const one = (start: string, end: string, price: number): PriceBucket => ({
  start,
  end,
  open: price,
  close: price,
  min: price,
  max: price,
  average: price,
  count: 1,
});
export const empty = (start: string, end: string): PriceBucket => ({
  start,
  end,
  open: null,
  close: null,
  min: null,
  max: null,
  average: null,
  count: 0,
});
