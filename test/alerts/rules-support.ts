import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { Alert } from '../helpers/api-types.js';

/** Helpers of the alert rule and alert event tests (not a test file itself). */

export type Headers = Record<string, string>;

export async function post<T>(t: TestApp, headers: Headers, url: string, payload: unknown, status = 201): Promise<T> {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload: payload as object });
  assert.equal(res.statusCode, status, res.body);
  return res.json<T>();
}

/** A product, a competitor, the competitor's listing of the product and our own listing of it. */
export async function catalogue(t: TestApp, headers: Headers, currency = 'EUR') {
  const product = await post<{ id: string }>(t, headers, '/products', {
    name: 'Kettle',
    base_price: 50,
    currency,
    url: 'https://our.example/kettle',
  });
  const competitor = await post<{ id: string }>(t, headers, '/competitors', {
    name: 'Rival',
    website: 'https://rival.example',
  });
  const listing = await post<{ id: string }>(t, headers, '/listings', {
    product_id: product.id,
    competitor_id: competitor.id,
    url: 'https://rival.example/kettle',
    enabled: false,
  });
  const ownListing = await post<{ id: string }>(t, headers, '/listings', { product_id: product.id, enabled: false });
  return { product, competitor, listing, ownListing };
}

export const rule = (extra: Record<string, unknown> = {}) => ({
  name: 'Kettle undercut',
  condition: { type: 'price_below', threshold: 45, currency: 'EUR' },
  ...extra,
});

export async function createAlert(t: TestApp, headers: Headers, body: Record<string, unknown> = rule()) {
  return post<Alert>(t, headers, '/alerts', body);
}
