import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_PREFIX } from '../../src/auth/keys.js';
import { useTestApp } from '../helpers/app.js';
import { assertExact429, assertSpec429, inOneHour, nextHour, rateHeaders } from '../ratelimit/support.js';

// Issue 2, point 6: failed authentications are limited per client address so keys cannot be
// brute-forced. Once an address has used up its failures, it is refused with 429 whatever it
// sends, a valid key included, so a guess that happens to be right tells the guesser nothing;
// other addresses are unaffected. (inject's remoteAddress sets the client address; no traffic.)

const LIMIT = 3;

describe('failed authentication attempts per address', () => {
  // A one-hour failure window lets the shared helpers check `reset` as the next top of the hour.
  const t = useTestApp({ AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_SECONDS: '3600' });
  let n = 0;
  const nextAddress = () => `127.0.${Math.floor(n / 250) + 10}.${(n++ % 250) + 1}`;
  const guess = () => `Bearer ${KEY_PREFIX}${'g'.repeat(42)}${n % 10}`;

  const send = (remoteAddress: string, authorization?: string) =>
    t.app.inject({
      method: 'GET',
      url: '/api/v1/products',
      remoteAddress,
      headers: authorization ? { authorization } : {},
    });

  it(`after ${LIMIT} failures an address gets 429, even with a valid key, while another address is unaffected`, async () => {
    await inOneHour(async () => {
      const attacker = nextAddress();
      const bystander = nextAddress();
      const valid = await t.newKey('free');

      // every kind of failure counts, and each 401 says how many the address has left
      let remaining = LIMIT;
      for (const authorization of [undefined, 'Basic Zm9vOmJhcg==', guess()]) {
        const sent = Date.now();
        const res = await send(attacker, authorization);
        assert.equal(res.statusCode, 401, res.body);
        assert.deepEqual(
          rateHeaders(res.headers),
          { limit: LIMIT, remaining: --remaining, reset: nextHour(sent) },
          `failure ${LIMIT - remaining}`,
        );
      }

      for (const authorization of [guess(), valid.headers.authorization, `Bearer ${valid.key}`, undefined]) {
        const sent = Date.now();
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/v1/products',
          remoteAddress: attacker,
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          payload: { name: 'Guessed', base_price: 1, currency: 'EUR' },
        });
        assertSpec429(res, LIMIT, sent, Date.now());
        // The headers describe the address's exhausted failure budget: nothing about the key.
        assert.deepEqual(
          rateHeaders(res.headers),
          { limit: LIMIT, remaining: 0, reset: nextHour(sent) },
          'a refused address learns nothing about the key',
        );
      }

      // The same valid key from another address works, and the refused attempts did not count
      // against it or create anything.
      const ok = await send(bystander, valid.headers.authorization);
      assert.equal(ok.statusCode, 200);
      assert.equal(rateHeaders(ok.headers).remaining, 999);
      assert.deepEqual(ok.json<{ data: unknown[] }>().data, []);
      // and a failure from the bystander is still an ordinary 401
      assert.equal((await send(bystander, guess())).statusCode, 401);
    });
  });

  it('successful requests do not count as failures', async () => {
    await inOneHour(async () => {
      const address = nextAddress();
      const valid = await t.newKey('free');
      for (let i = 0; i < LIMIT * 3; i++) {
        const ok = await send(address, valid.headers.authorization);
        assert.equal(ok.statusCode, 200);
        assert.equal(rateHeaders(ok.headers).limit, 1000, 'a success reports the key, not the failure budget');
      }
      for (let i = 0; i < LIMIT; i++) {
        const res = await send(address, guess());
        assert.equal(res.statusCode, 401, `failure ${i + 1}`);
        assert.equal(
          rateHeaders(res.headers).remaining,
          LIMIT - 1 - i,
          `failure ${i + 1}: X-RateLimit-Remaining drops by one`,
        );
      }
      assert.equal((await send(address, guess())).statusCode, 429);
    });
  });

  it("answers a blocked address with exactly the spec's 429, whether it was just blocked or known to be", async () => {
    await inOneHour(async () => {
      const address = nextAddress();
      for (let i = 0; i < LIMIT; i++) assert.equal((await send(address, guess())).statusCode, 401);
      // the failure that finds the budget used up (a lookup, then the limiter) ...
      const first = Date.now();
      assertExact429(await send(address, guess()), LIMIT, first);
      // ... and the ones refused at once, from the addresses this process knows are blocked
      const later = Date.now();
      assertExact429(await send(address), LIMIT, later);
    });
  });

  it('GET /usage is guarded too', async () => {
    const address = nextAddress();
    const valid = await t.newKey('free');
    for (let i = 0; i < LIMIT; i++) await send(address, guess());
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/usage',
      remoteAddress: address,
      headers: { authorization: valid.headers.authorization },
    });
    assert.equal(res.statusCode, 429);
  });
});
