import assert from 'node:assert/strict';
import type { TestApp } from '../../helpers/app.js';

/** Real objects in two accounts, so generated path ids sometimes exist (or belong to the other). */

const PREFIXES = ['prod_', 'comp_', 'lst_', 'alrt_', 'alev_', 'wh_', 'whdl_', 'evt_', 'obs_', 'pchg_', 'chk_'];
const ID = new RegExp(`^(${PREFIXES.join('|')})[0-9A-Za-z]+$`);
const MAX_POOL = 40;

/** Adds every id and cursor found in a JSON value to the pools. */
export function harvest(value: unknown, ids: Map<string, string[]>, cursors?: string[], exclude?: Set<string>): void {
  if (typeof value === 'string') {
    const m = ID.exec(value);
    if (m && !exclude?.has(value)) {
      const pool = ids.get(m[1]!) ?? [];
      if (!pool.includes(value)) {
        pool.push(value);
        if (pool.length > MAX_POOL) pool.shift();
      }
      ids.set(m[1]!, pool);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) harvest(v, ids, cursors, exclude);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'next_cursor' && typeof v === 'string' && cursors && !cursors.includes(v))
        cursors.splice(0, cursors.length - MAX_POOL, v);
      else harvest(v, ids, cursors, exclude);
    }
  }
}

/** Creates a product, competitor, listing, prices, an alert with an event, a webhook with a delivery. */
export async function seedAccount(t: TestApp, headers: Record<string, string>, ids: Map<string, string[]>, n: number) {
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, expect = [200, 201, 202]) => {
    const res = await t.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });
    assert.ok(expect.includes(res.statusCode), `${method} ${url}: ${res.statusCode} ${res.body}`);
    const body = res.json<{ id: string }>();
    harvest(body, ids);
    return body;
  };
  for (let i = 0; i < n; i++) {
    const product = await call('POST', '/products', {
      name: `Kettle ${i}`,
      sku: `K-${i}`,
      base_price: 20 + i,
      currency: 'EUR',
      category: 'kitchen',
    });
    const competitor = await call('POST', '/competitors', { name: `Shop ${i}`, website: 'http://127.0.0.1:9/' });
    const listing = await call('POST', '/listings', {
      product_id: product.id,
      competitor_id: competitor.id,
      url: `http://127.0.0.1:9/p/${i}`,
      enabled: false,
    });
    await call('POST', '/prices', {
      observations: [19.5, 18, 21].map((price, h) => ({
        product_id: product.id,
        competitor_id: competitor.id,
        price,
        currency: 'EUR',
        observed_at: new Date(Date.UTC(2025, 0, 1, h)).toISOString(),
      })),
    });
    const alert = await call('POST', '/alerts', {
      name: `Below ${i}`,
      product_id: product.id,
      condition: { type: 'price_below', threshold: 19, currency: 'EUR' },
    });
    await call('POST', `/alerts/${alert.id}/test`);
    const webhook = await call('POST', '/webhooks', { url: 'http://127.0.0.1:9/hooks' });
    await call('POST', `/webhooks/${webhook.id}/test`, {});
    await call('PUT', '/exchange-rates/USD/EUR', { rate: 0.9 });
    for (const list of [
      '/events',
      '/alert-events',
      `/webhooks/${webhook.id}/deliveries`,
      '/price-changes',
      `/listings/${listing.id}/checks`,
    ])
      await call('GET', list);
  }
}
