import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { assertExact429, assertSpec429, inOneHour, nextHour, rateHeaders } from './support.js';
import { hourStart, MINUTE_MS } from '../../src/time.js';

// Spec part 7: the 1001st request of a free key within an hour is a 429 with Retry-After and
// exactly {error, status, retry_after, limit, remaining, reset}.

describe('over the hourly limit', () => {
  const t = useTestApp();

  it('the 1001st request of a free key gets the spec’s exact 429, and so does every later one', async () => {
    // A minute into the hour on the app's clock: the window cannot turn while the test spends it.
    t.clock.set(hourStart(Date.now()) + MINUTE_MS);
    const k = await t.newKey('free');
    const other = await t.newKey('free', k.accountId);
    const remaining: number[] = [];
    for (let i = 0; i < 1000; i++) {
      // alternate a 200 and a 404: both count
      const url = i % 2 === 0 ? '/api/v1/products?limit=1' : '/v1/products/prod_none';
      const res = await t.app.inject({ method: 'GET', url, headers: k.headers });
      assert.equal(res.statusCode, i % 2 === 0 ? 200 : 404, `request ${i + 1}`);
      remaining.push(rateHeaders(res.headers).remaining);
    }
    assert.deepEqual(
      remaining,
      Array.from({ length: 1000 }, (_, i) => 999 - i),
    );

    const sent = t.clock.now();
    const over = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
    assertSpec429(over, 1000, sent, t.clock.now());
    assert.deepEqual(rateHeaders(over.headers), { limit: 1000, remaining: 0, reset: nextHour(sent) });
    assertExact429(over, 1000, sent);

    // A refused write leaves nothing behind: the hook answers before the body is read.
    const sentPost = t.clock.now();
    const post = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: k.headers,
      payload: { name: 'Refused', base_price: 1, currency: 'EUR', sku: 'REFUSED' },
    });
    assertSpec429(post, 1000, sentPost, t.clock.now());
    const sentV1 = t.clock.now();
    assertSpec429(
      await t.app.inject({ method: 'GET', url: '/v1/products', headers: k.headers }),
      1000,
      sentV1,
      t.clock.now(),
    );
    const sentBad = t.clock.now();
    assertSpec429(
      await t.app.inject({ method: 'POST', url: '/api/v1/products', headers: k.headers, payload: '{broken' }),
      1000,
      sentBad,
      t.clock.now(),
    );

    // The account's other key is unaffected and sees that nothing was created.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/products?sku=REFUSED', headers: other.headers });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json<{ data: unknown[] }>().data, []);
    assert.equal(rateHeaders(list.headers).remaining, 999);
  });

  it('a business key is not refused at 1000', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('business');
      let last = 0;
      for (let i = 0; i < 1001; i++) {
        const res = await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers }); // 404 before any query
        assert.equal(res.statusCode, 404);
        last = rateHeaders(res.headers).remaining;
      }
      assert.equal(last, 100_000 - 1001);
    });
  });
});
