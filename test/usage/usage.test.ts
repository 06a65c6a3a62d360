import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { HOUR_MS, inOneHour, nextHour, rateHeaders } from '../ratelimit/support.js';
import type { Usage } from '../helpers/api-types.js';

// API.md: GET /api/v1/usage reports the key's plan, limit, used, remaining, reset and hourly
// history, and does not count against the limit (it still carries the rate-limit headers).

const thisHour = () => new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS).toISOString();

describe('GET /usage', () => {
  const t = useTestApp();
  const usage = (headers: Record<string, string>, query = '') =>
    t.app.inject({ method: 'GET', url: `/api/v1/usage${query}`, headers });

  it('reports plan, limit, used, remaining, reset and this hour’s requests, without counting itself', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('starter');
      for (let i = 0; i < 5; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
      await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers }); // a 404 counts too

      const before = Date.now();
      const first = await usage(k.headers);
      assert.equal(first.statusCode, 200, first.body);
      const u = first.json<Usage>();
      assert.deepEqual(u, {
        object: 'usage',
        key_id: k.keyId,
        account_id: k.accountId,
        plan: 'starter',
        limit: 10_000,
        used: 6,
        remaining: 9_994,
        reset: nextHour(before),
        history: [{ hour: thisHour(), requests: 6, rejected: 0 }],
      });
      assert.deepEqual(rateHeaders(first.headers), { limit: 10_000, remaining: 9_994, reset: nextHour(before) });

      // Repeated calls, under both prefixes, change nothing.
      for (let i = 0; i < 5; i++) {
        const again = await t.app.inject({
          method: 'GET',
          url: i % 2 ? '/v1/usage' : '/api/v1/usage?hours=1',
          headers: k.headers,
        });
        assert.equal(again.statusCode, 200);
        assert.equal(rateHeaders(again.headers).remaining, 9_994);
        assert.equal(again.json<Usage>().used, 6);
        assert.deepEqual(again.json<Usage>().history, u.history);
      }
      const next = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
      assert.equal(rateHeaders(next.headers).remaining, 9_993);
    });
  });

  it('history merges unflushed counts with what is stored, and a flush writes them to api_usage', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('free');
      for (let i = 0; i < 4; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
      await t.rt.usage.flush();
      const stored = await t.rt.db.query<{ hour: Date; requests: number; rejected: number }>(
        'select hour, requests, rejected from api_usage where key_id = $1',
        [k.keyId],
      );
      assert.deepEqual(
        stored.rows.map((r) => ({ hour: r.hour.toISOString(), requests: r.requests, rejected: r.rejected })),
        [{ hour: thisHour(), requests: 4, rejected: 0 }],
      );

      // three more, not flushed yet: the history shows stored + unflushed
      for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
      const u = (await usage(k.headers)).json<Usage>();
      assert.deepEqual(u.history, [{ hour: thisHour(), requests: 7, rejected: 0 }]);
      assert.equal(u.used, 7);

      await t.rt.usage.flush();
      const after = await t.rt.db.query<{ requests: number }>('select requests from api_usage where key_id = $1', [
        k.keyId,
      ]);
      assert.deepEqual(after.rows, [{ requests: 7 }]);
      assert.deepEqual(
        (await usage(k.headers)).json<Usage>().history,
        u.history,
        'flushing neither loses nor doubles counts',
      );
    });
  });

  it('lists earlier hours newest first, within the hours asked for', async () => {
    const k = await t.newKey('free');
    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    // Earlier hours' traffic as a flush would have written it.
    for (const [ago, requests, rejected] of [
      [1, 10, 0],
      [3, 1200, 200],
      [30, 5, 0],
    ] as const) {
      await t.rt.db.query('insert into api_usage (key_id, hour, requests, rejected) values ($1, $2, $3, $4)', [
        k.keyId,
        new Date(hour - ago * HOUR_MS),
        requests,
        rejected,
      ]);
    }
    const iso = (ago: number) => new Date(hour - ago * HOUR_MS).toISOString();
    const all = (await usage(k.headers, '?hours=720')).json<Usage>();
    assert.deepEqual(all.history, [
      { hour: iso(1), requests: 10, rejected: 0 },
      { hour: iso(3), requests: 1200, rejected: 200 },
      { hour: iso(30), requests: 5, rejected: 0 },
    ]);
    assert.equal(all.used, 0, 'earlier hours are history, not this hour’s use');
    const day = (await usage(k.headers)).json<Usage>(); // default: 24 hours
    assert.deepEqual(
      day.history.map((h) => h.hour),
      [iso(1), iso(3)],
    );
    const two = (await usage(k.headers, '?hours=2')).json<Usage>(); // this hour and the one before
    assert.deepEqual(
      two.history.map((h) => h.hour),
      [iso(1)],
    );
  });

  it('shows only the calling key’s usage', async () => {
    const a = await t.newKey('free');
    const b = await t.newKey('free', a.accountId);
    for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: a.headers });
    const ub = (await usage(b.headers)).json<Usage>();
    assert.equal(ub.key_id, b.keyId);
    assert.equal(ub.used, 0);
    assert.deepEqual(ub.history, []);
  });

  it('still answers when the key is over its limit, reporting the refusals', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('free');
      for (let i = 0; i < 1003; i++)
        await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers }); // 404 before any query
      const res = await usage(k.headers);
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json<Usage>();
      assert.equal(u.used, 1000);
      assert.equal(u.remaining, 0);
      assert.deepEqual(u.history, [{ hour: thisHour(), requests: 1000, rejected: 3 }]);
      assert.equal(rateHeaders(res.headers).remaining, 0);
    });
  });

  it('rejects a bad hours parameter with 422 and names it', async () => {
    const k = await t.newKey('free');
    for (const hours of ['0', '721', 'abc', '-1', '1.5', '']) {
      const res = await usage(k.headers, `?hours=${hours}`);
      assert.equal(res.statusCode, 422, `hours=${hours}: ${res.body}`);
      const body = res.json<{ code: string; details?: { field: string }[] }>();
      assert.equal(body.code, 'validation_failed');
      assert.ok(
        body.details?.some((d) => /hours/.test(d.field)),
        `hours=${hours}: details name the field: ${res.body}`,
      );
      assert.equal(rateHeaders(res.headers).limit, 1000, 'a 422 carries the headers too');
    }
    for (const hours of ['1', '720']) assert.equal((await usage(k.headers, `?hours=${hours}`)).statusCode, 200, hours);
  });
});

describe('GET /usage while counts are being written', () => {
  const t = useTestApp();

  it('history neither misses nor doubles requests whose flush is in flight', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('business');
      for (let n = 1; n <= 30; n++) {
        await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers });
        const [, res] = await Promise.all([
          t.rt.usage.flush(),
          t.app.inject({ method: 'GET', url: '/api/v1/usage?hours=1', headers: k.headers }),
        ]);
        assert.deepEqual(
          res.json<Usage>().history,
          [{ hour: thisHour(), requests: n, rejected: 0 }],
          `after request ${n}`,
        );
      }
    });
  });

  it('a write that fails keeps its counts for the next one', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('free');
      for (let i = 0; i < 3; i++)
        await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers });
      await t.rt.db.exec('alter table api_usage rename to api_usage_away');
      try {
        await t.rt.usage.flush(); // fails: the table is not there
      } finally {
        await t.rt.db.exec('alter table api_usage_away rename to api_usage');
      }
      await t.app.inject({ method: 'GET', url: '/v1/products/not-an-id', headers: k.headers });
      await t.rt.usage.flush();
      const r = await t.rt.db.query<{ requests: number }>('select requests from api_usage where key_id = $1', [
        k.keyId,
      ]);
      assert.deepEqual(r.rows, [{ requests: 4 }]);
    });
  });
});
