import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import { ingestOk } from '../prices/ingest-support.js';
import { at, catalogue, createRule, fired, series } from './engine-support.js';
import type { AlertEvent } from '../helpers/api-types.js';

/** POST /alerts/preview: the events a rule would have fired over stored prices, writing nothing. */

const t = useTestApp();

const preview = (headers: Headers, payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/api/v1/alerts/preview', headers, payload: payload as object });

/** What live and preview both decide: everything but the ids and the timestamps of creation. */
const decided = (e: AlertEvent) => {
  const { id: _i, alert_id: _a, created_at: _c, acknowledged_at: _k, ...rest } = e;
  return rest;
};

describe('alert preview', () => {
  it('preview and live produce the same events on the same sequence, and the preview writes nothing', async () => {
    const c = await catalogue(t);
    const bodies = [
      { condition: { type: 'price_below', threshold: 45 }, hysteresis_percent: 5, confirmations: 2 },
      { condition: { type: 'price_drop', percent: 5 }, rearm: 'every_change' },
      { condition: { type: 'price_rise', amount: 3 }, rearm: 'cooldown', cooldown_seconds: 7200 },
      { condition: { type: 'back_in_stock' } },
      { condition: { type: 'lowest_in_days', days: 3 }, rearm: 'every_change', daily_cap: 1 },
      { product_id: c.productId, condition: { type: 'undercut', margin_amount: 2 } },
    ];
    const ids: string[] = [];
    for (const b of bodies) ids.push(await createRule(t, c.headers, b));
    const prices = [50, 44, 43, 47, 44, 42, 49, 52, 40, 39, 44, 46, 38, 41];
    await series(
      t,
      c,
      prices.map((price, i) => ({ price, in_stock: i % 4 !== 2, hours: i * 5 })),
    );
    // A late one: neither live nor preview fires on it.
    await series(t, c, [{ price: 1, hours: 3 }]);
    const live = await fired(t, c.headers);
    assert.ok(live.length >= 10, `a sequence that fires enough to compare: ${live.length}`);
    const before = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from alert_events where account_id = $1',
      [c.accountId],
    );
    for (const [i, body] of bodies.entries()) {
      const res = await preview(c.headers, { name: 'p', ...body, from: at(0), to: at(24 * 30) });
      assert.equal(res.statusCode, 200, res.body);
      const got = res.json<{ data: AlertEvent[]; count: number }>();
      const expected = live.filter((e) => e.alert_id === ids[i]);
      assert.equal(got.count, got.data.length);
      assert.deepEqual(got.data.map(decided), expected.map(decided), JSON.stringify(body));
      for (const e of got.data) {
        assert.equal(e.id, null);
        assert.equal(e.alert_id, null);
        assert.equal(e.created_at, e.current!.observed_at);
      }
    }
    const after = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from alert_events where account_id = $1',
      [c.accountId],
    );
    assert.equal(after.rows[0]!.n, before.rows[0]!.n);
    assert.equal((await fired(t, c.headers)).length, live.length);
  });

  it('lowest_in_days from whole batches agrees with preview: windows of several lengths, a second currency, one instant twice', async () => {
    const c = await catalogue(t);
    const rate = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/exchange-rates/USD/EUR',
      headers: c.headers,
      payload: { rate: 0.9 },
    });
    assert.ok(rate.statusCode === 200 || rate.statusCode === 201, rate.body);
    const bodies = [1, 2, 5].map((days) => ({ condition: { type: 'lowest_in_days', days }, rearm: 'every_change' }));
    const ids: string[] = [];
    for (const b of bodies) ids.push(await createRule(t, c.headers, b));
    // Batches of six hours each, sent whole (live evaluates each batch at once); a USD price now
    // and then (compared through the rate), and two observations of one instant in one batch.
    const price = (h: number) => Math.round((50 + 10 * Math.sin(h / 9) + ((h * 13) % 7) / 2) * 100) / 100;
    for (let b = 0; b < 14; b++) {
      const observations = [];
      for (let h = b * 6; h < b * 6 + 6; h++) {
        const usd = h % 5 === 3;
        observations.push({
          product_id: c.productId,
          competitor_id: c.competitorId,
          price: usd ? Math.round((price(h) / 0.9) * 100) / 100 : price(h),
          currency: usd ? 'USD' : 'EUR',
          observed_at: at(h),
        });
        if (h % 3 === 1)
          observations.push({
            product_id: c.productId,
            competitor_id: c.competitorId,
            price: price(h) + 0.01,
            currency: 'EUR',
            observed_at: at(h),
          });
      }
      await ingestOk(t, c.headers, observations);
    }
    const live = await fired(t, c.headers);
    for (const [i, body] of bodies.entries()) {
      const expected = live.filter((e) => e.alert_id === ids[i]);
      assert.ok(
        expected.length >= 3 && live.length < 100,
        `${JSON.stringify(body)} fires enough to compare: ${expected.length} of ${live.length}`,
      );
      const res = await preview(c.headers, { name: 'p', ...body, from: at(0), to: at(24 * 30) });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json<{ data: AlertEvent[] }>().data.map(decided),
        expected.map(decided),
        JSON.stringify(body),
      );
    }
  });

  it('a range with no observations answers an empty list; the range bounds are [from, to)', async () => {
    const c = await catalogue(t);
    await series(t, c, [40, 41]);
    const empty = await preview(c.headers, {
      name: 'p',
      condition: { type: 'price_below', threshold: 45 },
      from: at(100),
      to: at(200),
    });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(empty.json(), { data: [], count: 0, complete: true, through: at(200) });
    const one = await preview(c.headers, {
      name: 'p',
      condition: { type: 'price_below', threshold: 45 },
      rearm: 'every_change',
      from: at(1),
      to: at(2),
    });
    assert.deepEqual(
      one.json<{ data: AlertEvent[] }>().data.map((e) => e.current!.price),
      [41],
    );
  });

  it("bad bodies get 422 naming the field, malformed JSON 400, another account's product 422", async () => {
    const c = await catalogue(t);
    const other = await catalogue(t);
    const ok = { name: 'p', condition: { type: 'price_below', threshold: 45 }, from: at(0), to: at(10) };
    const cases: [unknown, string][] = [
      [{ ...ok, from: undefined }, 'from'],
      [{ ...ok, to: 'yesterday' }, 'to'],
      [{ ...ok, to: at(0) }, 'to'],
      [{ ...ok, to: at(24 * 367) }, 'to'],
      [{ ...ok, condition: { type: 'price_below' } }, 'condition'],
      [{ ...ok, condition: { type: 'price_drop' } }, 'condition'],
      [{ ...ok, condition: { type: 'lowest_in_days', days: 366 } }, 'condition'],
      [{ ...ok, extra: 1 }, 'extra'],
      [{ ...ok, product_id: other.productId }, 'product_id'],
      [{ ...ok, condition: { type: 'not_cheapest' } }, 'condition.type'],
      [{ ...ok, confirmations: 1e300 }, 'confirmations'],
    ];
    for (const [body, field] of cases) {
      const res = await preview(c.headers, body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      const err = res.json<{ code: string; details?: { field: string }[] }>();
      assert.equal(err.code, 'validation_failed');
      assert.ok(
        err.details?.some((d) => d.field.startsWith(field)),
        `${field} in ${res.body}`,
      );
    }
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts/preview',
      headers: c.headers,
      payload: '{"name":',
    });
    assert.equal(bad.statusCode, 400, bad.body);
  });
});
