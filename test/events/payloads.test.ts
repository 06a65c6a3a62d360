import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { EVENT_TYPES } from '../../src/events/schemas.js';
import { createCompetitor, useMonitoringTest } from '../jobs/support.js';
import { deref, type Doc, fetchDocument, type Obj } from '../openapi/support.js';
import { assertDocumentedEvents } from './documented.js';
import type { AnyEvent } from '../helpers/api-types.js';

/**
 * Each event type's `data` is documented (src/events/payloads.ts), so the typed client's `Event`
 * is a union on `type`. Real events, made through the HTTP API, match their variant; the held
 * reading and the disabled endpoint are checked where they are made (test/checks/held.test.ts,
 * test/webhooks/delivery-failures.test.ts).
 */

const t = useMonitoringTest();
const T = { timeout: 60_000 };

describe('documented event payloads', () => {
  let doc: Doc;
  before(async () => {
    doc = await fetchDocument(t.app);
  });

  it('one variant per event type, each naming the resource its data is', () => {
    const event = deref<Obj>(doc, { $ref: '#/components/schemas/Event' });
    const variants = (event.oneOf as Obj[]).map((v) => deref<Obj>(doc, v));
    const types = variants.map((v) => ((v.properties as Obj).type as { enum: string[] }).enum.join());
    assert.deepEqual(types, [...EVENT_TYPES]);
    const data = (type: string) => ((variants[(types as string[]).indexOf(type)]!.properties as Obj).data as Obj).$ref;
    assert.equal(data('alert.triggered'), '#/components/schemas/AlertEvent');
    assert.equal(data('product.deleted'), '#/components/schemas/Product');
    assert.equal(data('stock.changed'), '#/components/schemas/PriceChange');
    assert.equal(data('listing.check_failed'), '#/components/schemas/ListingCheck');
    assert.equal(data('endpoint.disabled'), '#/components/schemas/Webhook');
    assert.deepEqual(Object.keys((event.discriminator as Obj).mapping as Obj), [...EVENT_TYPES]);
  });

  it("real events of every kind the API makes match their type's variant", T, async () => {
    const { headers } = t.account;
    const call = async (method: string, url: string, payload?: object) => {
      const res = await t.app.inject({
        method: method as 'GET',
        url: `/api/v1${url}`,
        headers,
        ...(payload ? { payload } : {}),
      });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.statusCode === 204 ? undefined : res.json<Obj>();
    };
    const product = (await call('POST', '/products', {
      name: 'Payload kettle',
      sku: 'PAY-1',
      base_price: 20,
      currency: 'EUR',
    }))!;
    await call('PATCH', `/products/${String(product.id)}`, { name: 'Payload kettle 2' });
    const competitorId = await createCompetitor(t, 'Payload shop');
    await call('PATCH', `/competitors/${competitorId}`, { notes: 'watched' });
    const listing = (await call('POST', '/listings', {
      product_id: product.id,
      competitor_id: competitorId,
      url: `${t.site.url}/status/500`,
    }))!;
    await call('PATCH', `/listings/${String(listing.id)}`, { check_interval_seconds: 7200 });
    await call('POST', `/listings/${String(listing.id)}/check`); // fails: listing.check_failed
    const at = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    await call('POST', '/prices', {
      observations: [
        {
          product_id: product.id,
          competitor_id: competitorId,
          price: 19,
          currency: 'EUR',
          in_stock: true,
          observed_at: at(2),
        },
        {
          product_id: product.id,
          competitor_id: competitorId,
          price: 18,
          currency: 'EUR',
          in_stock: false,
          observed_at: at(1),
        },
      ],
    });
    const rule = (await call('POST', '/alerts', {
      name: 'Payload rule',
      condition: { type: 'price_below', threshold: 10 },
    }))!;
    await call('POST', `/alerts/${String(rule.id)}/test`);
    const hook = (await call('POST', '/webhooks', {
      url: 'https://hooks.example/payloads',
      event_types: ['product.created'],
    }))!;
    await call('POST', `/webhooks/${String(hook.id)}/test`);
    await call('DELETE', `/listings/${String(listing.id)}`);
    await call('DELETE', `/competitors/${competitorId}`);
    await call('DELETE', `/products/${String(product.id)}`);

    const events: AnyEvent[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = (await call('GET', `/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`))! as {
        data: AnyEvent[];
        pagination: { next_cursor: string | null };
      };
      events.push(...page.data);
      cursor = page.pagination.next_cursor;
    }
    const made = new Set(events.map((e) => e.type));
    const elsewhere: string[] = ['listing.price_held', 'endpoint.disabled'];
    assert.deepEqual(
      EVENT_TYPES.filter((type) => !made.has(type) && !elsewhere.includes(type)),
      [],
      'every other type was made here',
    );
    await assertDocumentedEvents(t.app, events);

    // The same rule catches a payload that is not its type's resource.
    const wrong = { ...events.find((e) => e.type === 'product.created')!, type: 'competitor.created' };
    await assert.rejects(assertDocumentedEvents(t.app, [wrong]), /does not match/);
  });
});
