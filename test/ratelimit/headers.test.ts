import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Plan } from '../../src/auth/plans.js';
import { useTestApp } from '../helpers/app.js';
import { inOneHour, nextHour, rateHeaders } from './support.js';

// Spec part 8 and API.md: every authenticated response, success or error, carries
// X-RateLimit-Limit / -Remaining / -Reset; each counted request takes exactly one off Remaining;
// Reset is the next top of the UTC hour; limits are per key and per plan. A 401 carries them
// too, for the calling address's failed-authentication budget (docs/API-DECISIONS.md).

describe('rate-limit headers', () => {
  const t = useTestApp();

  it('are on every authenticated response, success or error, and Remaining drops by one each time', async () => {
    await inOneHour(async () => {
      const { headers, key } = await t.newKey('free');
      const json = headers;
      const auth = { authorization: `Bearer ${key}` };
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: json,
        payload: { name: 'A', base_price: 1, currency: 'EUR', sku: 'S-1' },
      });
      const id = created.json<{ id: string }>().id;
      const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${id}`, headers: auth });
      const etag = String(got.headers.etag);

      const cases: [string, () => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>][] = [
        ['200 list', () => t.app.inject({ method: 'GET', url: '/api/v1/products', headers: auth })],
        ['200 /v1 alias', () => t.app.inject({ method: 'GET', url: '/v1/products', headers: auth })],
        [
          '304 If-None-Match',
          () =>
            t.app.inject({ method: 'GET', url: `/api/v1/products/${id}`, headers: { ...auth, 'if-none-match': etag } }),
        ],
        [
          '201 create',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products',
              headers: json,
              payload: { name: 'B', base_price: 2, currency: 'USD' },
            }),
        ],
        [
          '200 update',
          () => t.app.inject({ method: 'PUT', url: `/api/v1/products/${id}`, headers: json, payload: { name: 'A2' } }),
        ],
        [
          '404 unknown product',
          () => t.app.inject({ method: 'GET', url: '/api/v1/products/prod_doesnotexist', headers: auth }),
        ],
        [
          '409 duplicate sku',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products',
              headers: json,
              payload: { name: 'C', base_price: 1, currency: 'EUR', sku: 'S-1' },
            }),
        ],
        [
          '422 invalid fields',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products',
              headers: json,
              payload: { name: '', base_price: -1 },
            }),
        ],
        ['422 bad filter', () => t.app.inject({ method: 'GET', url: '/api/v1/products?limit=0', headers: auth })],
        [
          '400 invalid JSON',
          () => t.app.inject({ method: 'POST', url: '/api/v1/products', headers: json, payload: '{"name":' }),
        ],
        [
          '415 not JSON',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products',
              headers: { ...auth, 'content-type': 'text/plain' },
              payload: 'name=x',
            }),
        ],
        [
          '413 body too large',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products',
              headers: json,
              payload: JSON.stringify({ name: 'x'.repeat(t.rt.config.bodyLimit + 10) }),
            }),
        ],
        [
          '200 batch',
          () =>
            t.app.inject({
              method: 'POST',
              url: '/api/v1/products/batch',
              headers: json,
              payload: { products: [{ name: 'D', base_price: 3, currency: 'EUR' }] },
            }),
        ],
        ['204 delete', () => t.app.inject({ method: 'DELETE', url: `/api/v1/products/${id}`, headers: auth })],
        ['404 deleted', () => t.app.inject({ method: 'DELETE', url: `/api/v1/products/${id}`, headers: auth })],
      ];

      let expected = 1000 - 2; // the create and the GET above
      const statuses: number[] = [];
      for (const [name, send] of cases) {
        const before = Date.now();
        const res = await send();
        statuses.push(res.statusCode);
        expected--;
        const h = rateHeaders(res.headers as never);
        assert.deepEqual(
          h,
          { limit: 1000, remaining: expected, reset: nextHour(before) },
          `${name} (${res.statusCode}): ${res.body.slice(0, 200)}`,
        );
      }
      assert.deepEqual(statuses, [200, 200, 304, 201, 200, 404, 409, 422, 422, 400, 415, 413, 200, 204, 404]);
    });
  });

  it('carry each plan’s hourly limit: free 1000, starter 10000, business 100000', async () => {
    const plans: [Plan, number][] = [
      ['free', 1000],
      ['starter', 10_000],
      ['business', 100_000],
    ];
    for (const [plan, limit] of plans) {
      await inOneHour(async () => {
        const { headers } = await t.newKey(plan);
        const first = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers });
        const second = await t.app.inject({ method: 'GET', url: '/v1/products', headers });
        assert.equal(first.statusCode, 200);
        assert.equal(rateHeaders(first.headers).limit, limit, plan);
        assert.equal(rateHeaders(first.headers).remaining, limit - 1, plan);
        assert.equal(rateHeaders(second.headers).remaining, limit - 2, `${plan}: /api/v1 and /v1 share one counter`);
      });
    }
  });

  it('count per key: two keys of one account have separate counters', async () => {
    await inOneHour(async () => {
      const a = await t.newKey('free');
      const b = await t.newKey('free', a.accountId);
      assert.equal(b.accountId, a.accountId);
      for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: a.headers });
      const ra = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: a.headers });
      const rb = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: b.headers });
      assert.equal(rateHeaders(ra.headers).remaining, 996);
      assert.equal(rateHeaders(rb.headers).remaining, 999);
    });
  });

  it('on a 401 describe the failed-authentication budget of the address, hourly by default', async () => {
    await inOneHour(async () => {
      // useTestApp sets AUTH_FAILURE_LIMIT; AUTH_FAILURE_WINDOW_SECONDS is left at its default,
      // which is an hour, so Reset is the next top of the hour here as on a key's answers.
      const limit = t.rt.config.authFailureLimit;
      const remoteAddress = `127.0.7.${(Date.now() % 250) + 1}`;
      const key = await t.newKey('free');
      for (let i = 1; i <= 3; i++) {
        const before = Date.now();
        const res = await t.app.inject({
          method: 'GET',
          url: '/api/v1/products',
          remoteAddress,
          headers: { authorization: 'Bearer not-a-key' },
        });
        assert.equal(res.statusCode, 401);
        assert.deepEqual(
          rateHeaders(res.headers),
          { limit, remaining: limit - i, reset: nextHour(before) },
          `failure ${i}`,
        );
        // A key's own answers from the same address are unaffected: they describe the key.
        const ok = await t.app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress, headers: key.headers });
        assert.deepEqual(rateHeaders(ok.headers), { limit: 1000, remaining: 1000 - i, reset: nextHour(before) });
      }
    });
  });
});
