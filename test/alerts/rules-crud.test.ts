import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf, PREFIXES } from '../products/support.js';
import { catalogue, createAlert, rule } from './rules-support.js';
import type { Alert } from '../helpers/api-types.js';

describe('alert rules: create, read, update, delete', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`walks a rule's lifecycle under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const { product } = await catalogue(t, headers);
      const body = {
        name: 'Kettle undercut',
        product_id: product.id,
        competitor_id: null,
        listing_id: null,
        condition: { type: 'price_below', threshold: 45.0, currency: 'EUR' },
        rearm: 'on_clear',
        hysteresis_percent: 0,
        cooldown_seconds: 0,
        confirmations: 1,
        daily_cap: null,
        enabled: true,
      };
      const created = await t.app.inject({ method: 'POST', url: `${prefix}/alerts`, headers, payload: body });
      assert.equal(created.statusCode, 201, created.body);
      const a = created.json<Alert>();
      assert.match(a.id, /^alrt_[0-9a-z]+$/);
      assert.equal(created.headers.location, `${prefix}/alerts/${a.id}`);
      assert.deepEqual(
        { ...a, id: undefined, created_at: undefined, updated_at: undefined },
        {
          ...body,
          id: undefined,
          object: 'alert',
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.match(a.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(a.updated_at, a.created_at);

      const got = await t.app.inject({ method: 'GET', url: `${prefix}/alerts/${a.id}`, headers });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.json(), a);

      const put = await t.app.inject({
        method: 'PUT',
        url: `${prefix}/alerts/${a.id}`,
        headers,
        payload: { name: 'Renamed', daily_cap: 5 },
      });
      assert.equal(put.statusCode, 200, put.body);
      const p = put.json<Alert>();
      assert.deepEqual({ ...p, updated_at: undefined }, { ...a, name: 'Renamed', daily_cap: 5, updated_at: undefined });
      assert.ok(p.updated_at > a.updated_at);

      const off = await t.app.inject({
        method: 'PATCH',
        url: `${prefix}/alerts/${a.id}`,
        headers,
        payload: { enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      assert.equal(off.json<Alert>().enabled, false);
      assert.equal(off.json<Alert>().name, 'Renamed');

      const del = await t.app.inject({ method: 'DELETE', url: `${prefix}/alerts/${a.id}`, headers });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      expectError(await t.app.inject({ method: 'GET', url: `${prefix}/alerts/${a.id}`, headers }), 404, 'not_found');
      expectError(await t.app.inject({ method: 'DELETE', url: `${prefix}/alerts/${a.id}`, headers }), 404, 'not_found');
      expectError(
        await t.app.inject({ method: 'PATCH', url: `${prefix}/alerts/${a.id}`, headers, payload: { enabled: true } }),
        404,
        'not_found',
      );
    });
  }

  it('fills every default: the whole account, on_clear, no cap, enabled', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers, { name: 'Any drop', condition: { type: 'price_drop', percent: 5 } });
    assert.deepEqual(
      { ...a, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        object: 'alert',
        name: 'Any drop',
        product_id: null,
        competitor_id: null,
        listing_id: null,
        condition: { type: 'price_drop', percent: 5 },
        rearm: 'on_clear',
        hysteresis_percent: 0,
        cooldown_seconds: 0,
        confirmations: 1,
        daily_cap: null,
        enabled: true,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const failing = await createAlert(t, headers, { name: 'Broken pages', condition: { type: 'listing_failing' } });
    assert.deepEqual(
      failing.condition,
      { type: 'listing_failing', failures: 3 },
      'the default number of failures is shown',
    );
    const lower = await createAlert(t, headers, {
      name: 'x',
      condition: { type: 'price_above', threshold: 1.2345, currency: 'usd' },
    });
    assert.deepEqual(lower.condition, { type: 'price_above', threshold: 1.2345, currency: 'USD' });
  });

  it('keeps exact numbers: hysteresis with 4 decimals, the largest cooldown, cap and confirmations', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(
      t,
      headers,
      rule({
        rearm: 'cooldown',
        hysteresis_percent: 2.5001,
        cooldown_seconds: 31_536_000,
        confirmations: 100,
        daily_cap: 100_000,
      }),
    );
    assert.equal(a.hysteresis_percent, 2.5001);
    assert.equal(a.cooldown_seconds, 31_536_000);
    assert.equal(a.confirmations, 100);
    assert.equal(a.daily_cap, 100_000);
    const got = (await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${a.id}`, headers })).json<Alert>();
    assert.deepEqual(got, a);
  });

  it('replaces the condition as a whole and refuses an update that leaves the rule invalid', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers,
      payload: { condition: { type: 'out_of_stock' } },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json<Alert>().condition, { type: 'out_of_stock' });
    const bad = expectError(
      await t.app.inject({
        method: 'PUT',
        url: `/api/v1/alerts/${a.id}`,
        headers,
        payload: { condition: { type: 'price_rise' } },
      }),
      422,
      'validation_failed',
    );
    assert.deepEqual(fieldsOf(bad), ['condition']);
    const again = (await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${a.id}`, headers })).json<Alert>();
    assert.deepEqual(again.condition, { type: 'out_of_stock' }, 'a refused update changes nothing');
    const empty = await t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${a.id}`, headers, payload: {} });
    assert.equal(empty.statusCode, 200);
    assert.equal(empty.json<Alert>().name, a.name);
  });

  it('a new condition or scope makes the rule forget its state; enabling it does not', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    const states = async () =>
      Number(
        (await t.rt.db.query<{ n: number }>('select count(*)::int as n from alert_states where alert_id = $1', [a.id]))
          .rows[0]!.n,
      );
    await t.rt.db.query(
      `insert into alert_states (alert_id, subject, streak, armed) values ($1, 'series:x', 2, false)`,
      [a.id],
    );
    await t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${a.id}`, headers, payload: { enabled: false } });
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers,
      payload: { enabled: true, name: 'x' },
    });
    assert.equal(await states(), 1);
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers,
      payload: { condition: { ...rule().condition } },
    });
    assert.equal(await states(), 1, 'the same condition again is no change');
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers,
      payload: { condition: { type: 'price_below', threshold: 40 } },
    });
    assert.equal(await states(), 0);
  });

  it('takes an Idempotency-Key on POST: a retry replays the rule instead of making a second one', async () => {
    const { headers } = await t.newKey();
    const h = { ...headers, 'idempotency-key': 'alert-retry-1' };
    const first = await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers: h, payload: rule() });
    const second = await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers: h, payload: rule() });
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.equal(second.json<Alert>().id, first.json<Alert>().id);
    const other = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers: h,
      payload: rule({ name: 'Other' }),
    });
    expectError(other, 409, 'conflict');
    const list = (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers })).json<{ data: Alert[] }>();
    assert.equal(list.data.length, 1);
  });

  it('records no event for rule writes (alert.triggered is the only alert event type)', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    await t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${a.id}`, headers, payload: { enabled: false } });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/alerts/${a.id}`, headers });
    const events = (await t.app.inject({ method: 'GET', url: '/api/v1/events', headers })).json<{
      data: { type: string }[];
    }>();
    assert.deepEqual(
      events.data.filter((e) => e.type.startsWith('alert')),
      [],
    );
  });

  it('goes with its product when the product is deleted', async () => {
    const { headers } = await t.newKey();
    const { product } = await catalogue(t, headers);
    const a = await createAlert(t, headers, rule({ product_id: product.id }));
    await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${product.id}`, headers });
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${a.id}`, headers }), 404, 'not_found');
  });

  it('accepts the bodies the dashboard sends (dashboard/src/pages/alerts.ts)', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await catalogue(t, headers);
    const h = { ...headers, 'idempotency-key': 'dash-1' };
    const bodies = [
      {
        name: 'Kettle below 45',
        product_id: product.id,
        competitor_id: competitor.id,
        condition: { type: 'price_below', threshold: 45 },
        rearm: 'on_clear',
        cooldown_seconds: 0,
        confirmations: 1,
        daily_cap: null,
        enabled: true,
      },
      {
        name: 'Any drop',
        product_id: null,
        competitor_id: null,
        condition: { type: 'price_drop', percent: 5, amount: 2.5 },
        rearm: 'cooldown',
        cooldown_seconds: 3600,
        confirmations: 2,
        daily_cap: 10,
        enabled: false,
      },
      {
        name: 'Broken',
        product_id: null,
        competitor_id: null,
        condition: { type: 'listing_failing' },
        rearm: 'every_change',
        cooldown_seconds: 0,
        confirmations: 1,
        daily_cap: null,
        enabled: true,
      },
    ];
    const ids: string[] = [];
    for (const [i, body] of bodies.entries()) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers: { ...h, 'idempotency-key': `dash-${i}` },
        payload: body,
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json<Alert>().id);
    }
    const toggled = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${ids[1]}`,
      headers,
      payload: { enabled: true },
    });
    assert.equal(toggled.json<Alert>().enabled, true);
    const fired = await t.app.inject({
      method: 'POST',
      url: `/api/v1/alerts/${ids[0]}/test`,
      headers: { ...h, 'idempotency-key': 'dash-test' },
    });
    assert.equal(fired.statusCode, 201, fired.body);
    const open = (
      await t.app.inject({ method: 'GET', url: '/api/v1/alert-events?state=open&limit=50', headers })
    ).json<{ data: { id: string }[] }>();
    const acked = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alert-events/acknowledge',
      headers,
      payload: { ids: open.data.map((e) => e.id) },
    });
    assert.equal(acked.statusCode, 200, acked.body);
    assert.equal(acked.json<{ count: number }>().count, 1);
    // The dashboard's single acknowledge sends no body; its api() then sends no Content-Type either.
    const one = await t.app.inject({
      method: 'POST',
      url: `/api/v1/alert-events/${open.data[0]!.id}/acknowledge`,
      headers: { authorization: headers.authorization! },
    });
    assert.equal(one.statusCode, 200, one.body);
  });
});
