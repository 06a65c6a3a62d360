import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';
import { Contract, fetchDocument } from '../openapi/support.js';
import { catalogue, createAlert, post, rule } from './rules-support.js';
import type { AlertEvent, EventOf } from '../helpers/api-types.js';

describe('POST /alerts/{id}/test', () => {
  const t = useTestApp();

  it('with no price in scope: current null and a message that says so; visible at /events as alert.triggered with test true', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${a.id}/test`, headers });
    assert.equal(res.statusCode, 201, res.body);
    const e = res.json<AlertEvent>();
    assert.equal(res.headers.location, `/api/v1/alert-events/${e.id}`);
    assert.match(e.id, /^alev_/);
    assert.equal(e.object, 'alert_event');
    assert.equal(e.alert_id, a.id);
    assert.equal(e.condition_type, 'price_below');
    assert.equal(e.test, true);
    assert.equal(e.current, null);
    assert.equal(e.previous, null);
    assert.equal(e.acknowledged_at, null);
    assert.match(e.message, /no price/i);
    const events = (await t.app.inject({ method: 'GET', url: '/api/v1/events?type=alert.triggered', headers })).json<{
      data: EventOf<'alert.triggered'>[];
    }>();
    assert.equal(events.data.length, 1);
    assert.equal(events.data[0]!.type, 'alert.triggered');
    assert.equal(events.data[0]!.data.test, true);
    assert.deepEqual(events.data[0]!.data, e);
    assert.deepEqual((await t.app.inject({ method: 'GET', url: `/api/v1/alert-events/${e.id}`, headers })).json(), e);
  });

  it('carries the latest observation in scope as current and the one before as previous, and leaves state and cap alone', async () => {
    const { headers } = await t.newKey();
    const { product, competitor, listing } = await catalogue(t, headers);
    const prices = await t.app.inject({
      method: 'POST',
      url: '/api/v1/prices',
      headers,
      payload: {
        observations: [
          {
            product_id: product.id,
            listing_id: listing.id,
            price: 60,
            currency: 'EUR',
            in_stock: true,
            observed_at: '2026-01-01T10:00:00Z',
          },
          {
            product_id: product.id,
            listing_id: listing.id,
            price: 55.5,
            currency: 'EUR',
            in_stock: false,
            observed_at: '2026-01-02T10:00:00Z',
          },
          { product_id: product.id, price: 50, currency: 'EUR', observed_at: '2026-01-03T10:00:00Z' }, // our own
        ],
      },
    });
    assert.ok(prices.statusCode < 300, prices.body);
    const a = await createAlert(
      t,
      headers,
      rule({ product_id: product.id, condition: { type: 'price_below', threshold: 1 }, daily_cap: 1, enabled: false }),
    );
    await t.rt.db.query(
      `insert into alert_states (alert_id, subject, streak, armed, cap_day, cap_count) values ($1, 'x', 4, false, current_date, 1)`,
      [a.id],
    );
    const before = (await t.rt.db.query('select * from alert_states where alert_id = $1', [a.id])).rows;

    const e = await post<AlertEvent>(t, headers, `/alerts/${a.id}/test`, undefined);
    assert.deepEqual(e.current, {
      price: 55.5,
      currency: 'EUR',
      in_stock: false,
      observed_at: '2026-01-02T10:00:00.000Z',
    });
    assert.deepEqual(e.previous, {
      price: 60,
      currency: 'EUR',
      in_stock: true,
      observed_at: '2026-01-01T10:00:00.000Z',
    });
    assert.equal(e.product_id, product.id);
    assert.equal(e.competitor_id, competitor.id, "competitors' series by default: our own later price is not it");
    assert.equal(e.listing_id, listing.id);
    assert.match(e.message, /55\.50 EUR/);
    const again = await post<AlertEvent>(t, headers, `/alerts/${a.id}/test`, undefined);
    assert.notEqual(again.id, e.id, 'the daily cap does not hold a test back');
    assert.deepEqual((await t.rt.db.query('select * from alert_states where alert_id = $1', [a.id])).rows, before);

    const own = await createAlert(
      t,
      headers,
      rule({ product_id: product.id, condition: { type: 'price_above', threshold: 1, series: 'own' } }),
    );
    const ownEvent = await post<AlertEvent>(t, headers, `/alerts/${own.id}/test`, undefined);
    assert.equal(ownEvent.competitor_id, null);
    assert.deepEqual(ownEvent.current, {
      price: 50,
      currency: 'EUR',
      in_stock: null,
      observed_at: '2026-01-03T10:00:00.000Z',
    });
    assert.equal(ownEvent.previous, null);
  });

  it('is idempotent with an Idempotency-Key (the dashboard sends one)', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const h = { ...headers, 'idempotency-key': 'test-once' };
    const first = await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${a.id}/test`, headers: h });
    const second = await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${a.id}/test`, headers: h });
    assert.equal(first.statusCode, 201);
    assert.equal(second.json<AlertEvent>().id, first.json<AlertEvent>().id);
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/alert-events', headers })).json<{
      data: unknown[];
    }>();
    assert.equal(listed.data.length, 1);
    // The same key for another rule is a 409, which the document declares (found by the fuzzing suite).
    const other = await createAlert(t, headers, rule({ name: 'Other' }));
    const reused = await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${other.id}/test`, headers: h });
    expectError(reused, 409, 'conflict');
    new Contract(await fetchDocument(t.app)).check('POST', '/api/v1/alerts/{id}/test', reused);
    // The rule deleted, the replay is its 404, not the test event of a rule that is gone.
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/alerts/${a.id}`, headers })).statusCode, 204);
    const replay = await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${a.id}/test`, headers: h });
    assert.equal(expectError(replay, 404, 'not_found').error, 'Alert not found');
    new Contract(await fetchDocument(t.app)).check('POST', '/api/v1/alerts/{id}/test', replay);
  });

  it("another account's rule is a 404 and fires nothing", async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const b = await createAlert(t, theirs.headers);
    expectError(
      await t.app.inject({ method: 'POST', url: `/api/v1/alerts/${b.id}/test`, headers: mine.headers }),
      404,
      'not_found',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/alerts/alrt_nothere/test', headers: mine.headers }),
      404,
      'not_found',
    );
    for (const h of [mine.headers, theirs.headers]) {
      const events = (
        await t.app.inject({ method: 'GET', url: '/api/v1/events?type=alert.triggered', headers: h })
      ).json<{ data: unknown[] }>();
      assert.equal(events.data.length, 0);
    }
  });
});
