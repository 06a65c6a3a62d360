import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';

/** Helpers of the alert rule and alert event tests (not a test file itself). */

export type Headers = Record<string, string>;

export interface AlertJson {
  id: string;
  object: 'alert';
  name: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  condition: Record<string, unknown> & { type: string };
  rearm: string;
  hysteresis_percent: number;
  cooldown_seconds: number;
  confirmations: number;
  daily_cap: number | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export interface AlertEventJson {
  id: string;
  object: 'alert_event';
  alert_id: string;
  condition_type: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  previous: { price: number; currency: string; in_stock: boolean | null; observed_at: string } | null;
  current: { price: number; currency: string; in_stock: boolean | null; observed_at: string } | null;
  message: string;
  test: boolean;
  acknowledged_at: string | null;
  created_at: string;
}

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
  return post<AlertJson>(t, headers, '/alerts', body);
}
