import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { useTestApp } from '../helpers/app.js';
import { HOUR_MS, inOneHour, nextHour, rateHeaders } from './support.js';
import { TcpProxy } from './tcp-proxy.js';

// With REDIS_URL the counters live in Redis: one key per counter and window, expiring after the
// window; counted atomically; and when Redis goes away the limiter counts per process instead
// of failing requests, and goes back to Redis when it returns.

const REDIS_URL = process.env.REDIS_URL;
const skip = REDIS_URL ? false : 'REDIS_URL is not set: the Redis limiter is tested in the PostgreSQL + Redis pass';

describe('Redis counters', { skip }, () => {
  const t = useTestApp({ AUTH_FAILURE_LIMIT: '50' });
  let redis: Redis;
  before(() => {
    redis = new Redis(REDIS_URL!);
  });
  after(() => redis?.disconnect());

  /** Every key this test file's app wrote (its REDIS_PREFIX is unique), with value and TTL. */
  async function redisKeys() {
    const keys = await redis.keys(`${t.storage.env.REDIS_PREFIX}*`);
    return Promise.all(
      keys.map(async (k) => ({ k, v: Number(await redis.get(k)), pexpireAt: Date.now() + (await redis.pttl(k)) })),
    );
  }

  it('are in Redis, one per key and window, and expire when the window is over', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('free');
      const sent = Date.now();
      for (let i = 0; i < 3; i++) await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: k.headers });
      await t.app.inject({
        method: 'GET',
        url: '/api/v1/products',
        remoteAddress: '127.0.0.9',
        headers: { authorization: 'Bearer nope' },
      });
      const keys = await redisKeys();

      const windowStart = Math.floor(sent / HOUR_MS) * HOUR_MS;
      const counter = keys.find((e) => e.k.endsWith(`:key:${k.keyId}`));
      assert.ok(counter, `a counter for the key among ${keys.map((e) => e.k).join(', ')}`);
      assert.equal(counter.k, `${t.storage.env.REDIS_PREFIX}rl:3600:${windowStart}:key:${k.keyId}`);
      assert.equal(counter.v, 3);
      // expires a minute after the window (clock skew between processes), never persists
      assert.ok(counter.pexpireAt > nextHour(sent) * 1000, 'lives until the window is over');
      assert.ok(counter.pexpireAt <= nextHour(sent) * 1000 + 60_000 + 1_000, 'and not much longer');

      const failures = keys.find((e) => e.k.endsWith(':authfail:127.0.0.9'));
      assert.ok(failures, 'failed attempts are counted in Redis too');
      assert.equal(failures.v, 1);
      // the failure window is an hour by default, aligned like the keys' windows
      assert.equal(failures.k, `${t.storage.env.REDIS_PREFIX}rl:3600:${windowStart}:authfail:127.0.0.9`);
      assert.ok(failures.pexpireAt > nextHour(sent) * 1000 && failures.pexpireAt <= nextHour(sent) * 1000 + 61_000);
      for (const e of keys) assert.ok(e.pexpireAt > Date.now(), `${e.k} has a TTL`);
    });
  });

  it('count concurrent requests atomically: each gets its own Remaining', async () => {
    await inOneHour(async () => {
      const k = await t.newKey('free');
      const responses = await Promise.all(
        Array.from({ length: 200 }, () =>
          t.app.inject({ method: 'GET', url: '/api/v1/products/not-an-id', headers: k.headers }),
        ),
      );
      const remaining = responses.map((r) => rateHeaders(r.headers).remaining);
      assert.equal(new Set(remaining).size, 200, 'no Remaining value twice');
      // If the burst spans a second boundary the key is hot and takes leased blocks
      // (src/ratelimit/quota-leases.ts): the Remaining values may then skip the blocks' unused
      // counts, but the counts handed out are still exactly the 200 requests. A slow run spans two
      // boundaries and leases two blocks (seen in CI: a counter of 234), so two blocks' worth.
      assert.ok(Math.min(...remaining) >= 1000 - 200 - 64 && Math.max(...remaining) === 999);
      const usage = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: k.headers });
      assert.equal(usage.json<{ used: number }>().used, 200);
      const counter = (await redisKeys()).find((e) => e.k.endsWith(`:key:${k.keyId}`));
      assert.ok(counter && counter.v >= 200 && counter.v <= 264, `counter ${counter?.v}`);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const calls = Number(/^pricehound_ratelimit_redis_calls_total (\d+)$/m.exec(metrics)?.[1]);
      assert.ok(calls >= 1 && calls <= 210, `redis calls ${calls}: at most one per check, fewer when batched`);
      assert.match(metrics, /^pricehound_ratelimit_leased_counts_total \d+$/m);
    });
  });
});

describe('Redis going away and coming back', { skip }, () => {
  const target = new URL(REDIS_URL ?? 'redis://127.0.0.1:6379');
  const proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
  const env: Record<string, string> = {};
  before(async () => {
    await proxy.start();
    env.REDIS_URL = proxy.url; // read by useTestApp's before hook, which runs after this one
  });
  const t = useTestApp(env);
  after(() => proxy.stop());

  const limiter = () => t.rt.limiter as RedisRateLimiter;
  const remainingOf = async (headers: Record<string, string>) =>
    rateHeaders((await t.app.inject({ method: 'GET', url: '/api/v1/products/not-an-id', headers })).headers).remaining;

  it(
    'counts per process while Redis is down, without failing requests, and shares again once it is back',
    { timeout: 30_000 },
    async () => {
      await inOneHour(async () => {
        const k = await t.newKey('free');
        assert.equal(await remainingOf(k.headers), 999); // in Redis
        assert.equal(limiter().shared, true);

        const degraded = once(limiter(), 'degraded');
        const disconnected = once(limiter(), 'disconnected');
        await proxy.stop();
        await disconnected; // so no command is sent into the closing connection (to be replayed later)
        assert.equal(await remainingOf(k.headers), 999, 'counted in memory from zero');
        await degraded;
        assert.equal(limiter().shared, false);
        assert.equal(await remainingOf(k.headers), 998);
        assert.equal(await remainingOf(k.headers), 997);
        // unauthenticated failures are still answered (and counted in memory)
        assert.equal(
          (await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: { authorization: 'Bearer x' } }))
            .statusCode,
          401,
        );

        const connected = once(limiter(), 'connected');
        await proxy.start(); // same port
        await connected;
        const recovered = once(limiter(), 'recovered');
        assert.equal(
          await remainingOf(k.headers),
          998,
          'back on the Redis count: 1 before the outage, now 2 (memory had 3)',
        );
        await recovered;
        assert.equal(limiter().shared, true);
      });
    },
  );

  it('does not make every request wait while Redis hangs', { timeout: 30_000 }, async () => {
    const k = await t.newKey('free');
    await remainingOf(k.headers);
    const degraded = once(limiter(), 'degraded');
    proxy.hold(true); // connections stay up, Redis reads nothing
    try {
      const first = Date.now();
      await remainingOf(k.headers); // waits for the command timeout, then counts in memory
      await degraded;
      assert.ok(Date.now() - first >= 400, 'the first request did wait for Redis');
      const start = Date.now();
      for (let i = 0; i < 20; i++) await remainingOf(k.headers);
      // Each would take the 500 ms command timeout if every request tried Redis: 10 s.
      assert.ok(Date.now() - start < 5_000, `20 requests took ${Date.now() - start} ms`);
    } finally {
      proxy.hold(false);
    }
  });
});
