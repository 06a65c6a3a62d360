import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf } from '../products/support.js';
import { createAlert, rule } from './rules-support.js';
import type { Alert } from '../helpers/api-types.js';

/** Every condition type with the fields it takes, and what each refuses. */
const ACCEPTED: Record<string, unknown>[] = [
  { type: 'price_below', threshold: 45, currency: 'EUR' },
  { type: 'price_below', threshold: 0.0001 },
  { type: 'price_above', threshold: 99_999_999_999.9999, currency: 'JPY', series: 'own' },
  { type: 'price_drop', percent: 5 },
  { type: 'price_drop', amount: 2.5, series: 'competitors' },
  { type: 'price_drop', percent: 100, amount: 1 },
  { type: 'price_rise', percent: 250.1234 },
  { type: 'price_rise', amount: 0.01, series: 'own' },
  { type: 'undercut' },
  { type: 'undercut', margin_percent: 0 },
  { type: 'undercut', margin_percent: 5 },
  { type: 'undercut', margin_amount: 1.5 },
  { type: 'not_cheapest' },
  { type: 'lowest_in_days', days: 1 },
  { type: 'lowest_in_days', days: 365, series: 'own' },
  { type: 'back_in_stock' },
  { type: 'back_in_stock', series: 'own' },
  { type: 'out_of_stock', series: 'competitors' },
  { type: 'listing_failing', failures: 1 },
  { type: 'listing_failing', failures: 100 },
];

/** [condition, the fields the 422 names] */
const REFUSED: [unknown, string[]][] = [
  [{ type: 'price_below' }, ['condition.threshold']],
  [{ type: 'price_below', threshold: -1 }, ['condition.threshold']],
  [{ type: 'price_below', threshold: 1e12 }, ['condition.threshold']],
  [{ type: 'price_below', threshold: 1.00001 }, ['condition.threshold']],
  [{ type: 'price_below', threshold: '45' }, ['condition.threshold']],
  [{ type: 'price_below', threshold: 45, currency: 'XXY' }, ['condition.currency']],
  [{ type: 'price_below', threshold: 45, currency: 'euro' }, ['condition.currency']],
  [{ type: 'price_below', threshold: 45, percent: 5 }, ['condition.percent']],
  [{ type: 'price_below', threshold: 45, series: 'mine' }, ['condition.series']],
  [{ type: 'price_above', threshold: null }, ['condition.threshold']],
  [{ type: 'price_drop' }, ['condition']],
  [{ type: 'price_drop', percent: 0 }, ['condition.percent']],
  [{ type: 'price_drop', percent: 150 }, ['condition.percent']],
  [{ type: 'price_drop', amount: 0 }, ['condition.amount']],
  [{ type: 'price_drop', percent: -5 }, ['condition.percent']],
  [{ type: 'price_rise', percent: 1e9 }, ['condition.percent']],
  [{ type: 'price_rise', percent: 1.123456 }, ['condition.percent']],
  [{ type: 'price_rise', threshold: 5 }, ['condition.threshold']],
  [{ type: 'undercut', margin_percent: 5, margin_amount: 1 }, ['condition']],
  [{ type: 'undercut', margin_percent: 101 }, ['condition.margin_percent']],
  [{ type: 'undercut', margin_amount: -1 }, ['condition.margin_amount']],
  [{ type: 'undercut', series: 'own' }, ['condition.series']],
  [{ type: 'not_cheapest', threshold: 1 }, ['condition.threshold']],
  [{ type: 'lowest_in_days' }, ['condition.days']],
  [{ type: 'lowest_in_days', days: 0 }, ['condition.days']],
  [{ type: 'lowest_in_days', days: 366 }, ['condition.days']],
  [{ type: 'lowest_in_days', days: 1.5 }, ['condition.days']],
  [{ type: 'back_in_stock', days: 3 }, ['condition.days']],
  [{ type: 'out_of_stock', series: null }, ['condition.series']],
  [{ type: 'listing_failing', failures: 0 }, ['condition.failures']],
  [{ type: 'listing_failing', failures: 101 }, ['condition.failures']],
  [{ type: 'listing_failing', series: 'own' }, ['condition.series']],
  [{ type: 'price_crash', percent: 5 }, ['condition.type']],
  [{ threshold: 45 }, ['condition.type']],
  [{ type: 7 }, ['condition.type']],
  ['price_below', ['condition']],
  [null, ['condition']],
  [[], ['condition']],
];

describe('alert rules: what a body may hold', () => {
  const t = useTestApp();

  it('accepts every condition type with its fields, and answers it back', async () => {
    const { headers } = await t.newKey();
    for (const condition of ACCEPTED) {
      const a = await createAlert(t, headers, { name: condition.type, condition });
      const expected = { ...condition };
      if (condition.type === 'listing_failing' && expected.failures === undefined) expected.failures = 3;
      assert.deepEqual(a.condition, expected, JSON.stringify(condition));
    }
    const list = (await t.app.inject({ method: 'GET', url: '/api/v1/alerts?limit=100', headers })).json<{
      data: Alert[];
    }>();
    assert.equal(list.data.length, ACCEPTED.length);
  });

  it('refuses a wrong, missing or extra condition field with a 422 naming it, and creates nothing', async () => {
    const { headers } = await t.newKey();
    for (const [condition, fields] of REFUSED) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers,
        payload: { name: 'x', condition },
      });
      const body = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), fields, `${JSON.stringify(condition)}: ${res.body}`);
      // The same condition on an update is refused the same way.
    }
    const list = (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers })).json<{ data: Alert[] }>();
    assert.equal(list.data.length, 0);
  });

  it('refuses the same conditions on PUT and PATCH, leaving the rule as it was', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    for (const [condition, fields] of REFUSED.slice(0, 12)) {
      for (const method of ['PUT', 'PATCH'] as const) {
        const res = await t.app.inject({ method, url: `/api/v1/alerts/${a.id}`, headers, payload: { condition } });
        assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), fields, res.body);
      }
    }
    assert.deepEqual((await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${a.id}`, headers })).json(), a);
  });

  it('refuses bad rule fields, unknown fields and absurd numbers', async () => {
    const { headers } = await t.newKey();
    const cases: [Record<string, unknown>, string[]][] = [
      [{ condition: rule().condition }, ['name']],
      [{ name: 'x' }, ['condition']],
      [rule({ name: '' }), ['name']],
      [rule({ name: '   ' }), ['name']],
      [rule({ name: 'a'.repeat(201) }), ['name']],
      [rule({ name: 'a\u0000b' }), ['name']],
      [rule({ name: 42 }), ['name']],
      [rule({ rearm: 'sometimes' }), ['rearm']],
      [rule({ rearm: null }), ['rearm']],
      [rule({ hysteresis_percent: -1 }), ['hysteresis_percent']],
      [rule({ hysteresis_percent: 101 }), ['hysteresis_percent']],
      [rule({ hysteresis_percent: 1.00001 }), ['hysteresis_percent']],
      [rule({ cooldown_seconds: -1 }), ['cooldown_seconds']],
      [rule({ cooldown_seconds: 31_536_001 }), ['cooldown_seconds']],
      [rule({ cooldown_seconds: 1e300 }), ['cooldown_seconds']],
      [rule({ cooldown_seconds: 1.5 }), ['cooldown_seconds']],
      [rule({ confirmations: 0 }), ['confirmations']],
      [rule({ confirmations: 101 }), ['confirmations']],
      [rule({ daily_cap: 0 }), ['daily_cap']],
      [rule({ daily_cap: 100_001 }), ['daily_cap']],
      [rule({ daily_cap: 1e20 }), ['daily_cap']],
      [rule({ enabled: 'yes' }), ['enabled']],
      [rule({ product_id: 'comp_abc' }), ['product_id']],
      [rule({ product_id: 'prod_1; drop table alerts' }), ['product_id']],
      [rule({ competitor_id: 12 }), ['competitor_id']],
      [rule({ listing_id: '' }), ['listing_id']],
      [rule({ id: 'alrt_mine' }), ['id']],
      [rule({ object: 'alert' }), ['object']],
      [rule({ email: 'me@example.com' }), ['email']],
      [rule({ rearm: 'x', confirmations: 0, bogus: 1 }), ['bogus', 'confirmations', 'rearm']],
    ];
    for (const [body, fields] of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers, payload: body });
      assert.deepEqual(
        fieldsOf(expectError(res, 422, 'validation_failed')),
        fields,
        `${JSON.stringify(body).slice(0, 200)}: ${res.body}`,
      );
    }
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers })).json<{ data: unknown[] }>().data.length,
      0,
    );
  });

  it('answers malformed JSON, other content types and empty bodies with our error shape', async () => {
    const { headers } = await t.newKey();
    const a = await createAlert(t, headers);
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers, payload: '{"name": "x", ' }),
      400,
      'invalid_json',
    );
    expectError(
      await t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${a.id}`, headers, payload: '{enabled: false}' }),
      400,
      'invalid_json',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers: { ...headers, 'content-type': 'text/plain' },
        payload: 'name=x',
      }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers, payload: '[]' }),
      422,
      'validation_failed',
    );
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers, payload: 'null' }),
      422,
      'validation_failed',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers,
        payload: JSON.stringify(rule({ name: 'x'.repeat(2_000_000) })),
      }),
      413,
      'payload_too_large',
    );
  });

  it('stores SQL and HTML in a name as plain text', async () => {
    const { headers } = await t.newKey();
    for (const name of ["'); drop table alerts; --", '<script>alert(1)</script>', 'Ünïcødé ✓ 🫖', "Robert'); --"]) {
      const a = await createAlert(t, headers, rule({ name }));
      assert.equal(a.name, name);
      const got = await t.app.inject({ method: 'GET', url: `/api/v1/alerts/${a.id}`, headers });
      assert.equal(got.json<Alert>().name, name);
      assert.match(String(got.headers['content-type']), /^application\/json/);
    }
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/alerts', headers })).json<{ data: unknown[] }>().data.length,
      4,
    );
  });

  it('checks what a schema cannot say, on the whole rule after an update', async () => {
    const { headers } = await t.newKey();
    const competitor = await t.app.inject({
      method: 'POST',
      url: '/api/v1/competitors',
      headers,
      payload: { name: 'R', website: 'https://r.example' },
    });
    const compId = competitor.json<{ id: string }>().id;
    const own = expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/alerts',
        headers,
        payload: rule({ competitor_id: compId, condition: { type: 'price_drop', percent: 5, series: 'own' } }),
      }),
      422,
      'validation_failed',
    );
    assert.deepEqual(fieldsOf(own), ['competitor_id']);
    const a = await createAlert(t, headers, rule({ competitor_id: compId }));
    const later = expectError(
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/alerts/${a.id}`,
        headers,
        payload: { condition: { type: 'out_of_stock', series: 'own' } },
      }),
      422,
      'validation_failed',
    );
    assert.deepEqual(fieldsOf(later), ['competitor_id']);
    const both = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/alerts/${a.id}`,
      headers,
      payload: { competitor_id: null, condition: { type: 'out_of_stock', series: 'own' } },
    });
    assert.equal(both.statusCode, 200, both.body);
  });
});
