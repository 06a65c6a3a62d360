import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import type { PriceChange, PriceObservationBatchResult } from '../helpers/api-types.js';

/** Helpers shared by the ingestion and price-change tests (not a test file itself: no `.test.ts`). */

/** An account with a product, two competitors, and a listing of the product at the first competitor and on our own shop. */
export interface Catalogue {
  headers: Headers;
  accountId: string;
  productId: string;
  otherProductId: string;
  competitorId: string;
  competitor2Id: string;
  listingId: string;
  ownListingId: string;
}

async function create<T = { id: string }>(t: TestApp, headers: Headers, url: string, payload: object): Promise<T> {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<T>();
}

export async function catalogue(t: TestApp): Promise<Catalogue> {
  const { headers, accountId } = await t.newKey('business');
  const product = await create(t, headers, '/products', {
    name: 'Kettle',
    base_price: 50,
    currency: 'EUR',
    url: 'https://own.example/kettle',
  });
  const other = await create(t, headers, '/products', { name: 'Toaster', base_price: 30, currency: 'EUR' });
  const competitor = await create(t, headers, '/competitors', { name: 'Shop A', website: 'https://a.example' });
  const competitor2 = await create(t, headers, '/competitors', { name: 'Shop B', website: 'https://b.example' });
  const listing = await create(t, headers, '/listings', {
    product_id: product.id,
    competitor_id: competitor.id,
    url: 'https://a.example/kettle',
  });
  const own = await create(t, headers, '/listings', { product_id: product.id });
  return {
    headers,
    accountId,
    productId: product.id,
    otherProductId: other.id,
    competitorId: competitor.id,
    competitor2Id: competitor2.id,
    listingId: listing.id,
    ownListingId: own.id,
  };
}

export const ingest = (t: TestApp, headers: Headers, payload: unknown, extra: Headers = {}, prefix = '/api/v1') =>
  t.app.inject({
    method: 'POST',
    url: `${prefix}/prices`,
    headers: { ...headers, ...extra },
    payload: payload as object,
  });

/** POST /prices that must answer 200; its results. */
export async function ingestOk(
  t: TestApp,
  headers: Headers,
  observations: unknown[],
  atomic?: boolean,
): Promise<PriceObservationBatchResult> {
  const res = await ingest(t, headers, atomic === undefined ? { observations } : { observations, atomic });
  assert.equal(res.statusCode, 200, res.body.slice(0, 1000));
  return res.json<PriceObservationBatchResult>();
}

export async function changesOf(t: TestApp, headers: Headers, query = ''): Promise<PriceChange[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/price-changes?limit=100${query}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: PriceChange[] }>().data;
}

/** Rows of the account in the price tables, counted in the database itself. */
export async function priceRows(
  t: TestApp,
  accountId: string,
): Promise<{ observations: number; series: number; changes: number }> {
  const r = await t.rt.db.query<{ observations: number; series: number; changes: number }>(
    `select (select count(*)::int from price_observations where account_id = $1) as observations,
            (select count(*)::int from price_series where account_id = $1) as series,
            (select count(*)::int from price_changes where account_id = $1) as changes`,
    [accountId],
  );
  return r.rows[0]!;
}

/** The latest observation price_series holds for a series. */
export async function latest(t: TestApp, productId: string, competitorId: string | null) {
  const r = await t.rt.db.query<{ price: string; observed_at: Date; in_stock: boolean | null }>(
    `select latest_price::text as price, latest_observed_at as observed_at, latest_in_stock as in_stock
       from price_series where product_id = $1 and competitor_id is not distinct from $2`,
    [productId, competitorId],
  );
  return r.rows[0];
}

/** An hour-aligned instant `hours` after 2025-03-01T00:00:00Z. */
export const at = (hours: number) => new Date(Date.UTC(2025, 2, 1) + hours * 3_600_000).toISOString();
