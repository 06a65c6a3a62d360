import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import { at, type Catalogue, catalogue, ingestOk } from '../prices/ingest-support.js';
import type { AlertEvent } from '../helpers/api-types.js';

/** Helpers of the alert engine and preview tests (not a test file itself: no `.test.ts`). */

export const ALERT_EVENT_KEYS = [
  'acknowledged_at',
  'alert_id',
  'competitor_id',
  'condition_type',
  'created_at',
  'current',
  'id',
  'listing_id',
  'message',
  'object',
  'previous',
  'product_id',
  'sequence',
  'test',
];

/** A rule created through POST /api/v1/alerts; its id. */
export async function createRule(t: TestApp, headers: Headers, body: object): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/alerts',
    headers,
    payload: { name: 'rule', ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

/** The alert events of the account, oldest first, as the `alert.triggered` events of GET /events carry them. */
export async function fired(t: TestApp, headers: Headers, alertId?: string): Promise<AlertEvent[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/v1/events?type=alert.triggered&sort=created_at&limit=100',
    headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  const all = res.json<{ data: { type: string; data: AlertEvent }[] }>().data.map((e) => e.data);
  return alertId ? all.filter((e) => e.alert_id === alertId) : all;
}

/** Observations of one series at hours 0, 1, 2 ... (or at the hours given), sent one request each: each a new latest. */
export async function series(
  t: TestApp,
  c: Catalogue,
  prices: (number | { price: number; in_stock?: boolean | null; hours?: number; currency?: string })[],
  extra: object = {},
  start = 0,
): Promise<void> {
  let i = start;
  for (const p of prices) {
    const o = typeof p === 'number' ? { price: p } : p;
    const hours = o.hours ?? i;
    i = hours + 1;
    const { hours: _h, ...rest } = o as { hours?: number };
    await ingestOk(t, c.headers, [
      {
        product_id: c.productId,
        competitor_id: c.competitorId,
        currency: 'EUR',
        observed_at: at(hours),
        ...rest,
        ...extra,
      },
    ]);
  }
}

/** prices of the events, for short assertions. */
export const pricesOf = (events: AlertEvent[]) => events.map((e) => e.current?.price);

export { at, catalogue };
