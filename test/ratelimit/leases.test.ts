import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { HOT_PER_SECOND, LeaseBook, LEASE_MAX, RETURN_AFTER_MS } from '../../src/ratelimit/quota-leases.js';
import type { Window } from '../../src/ratelimit/limiter.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import { HOUR_MS, inOneHour } from './support.js';

// Hot keys count from blocks leased from Redis (src/ratelimit/quota-leases.ts; the rules are in
// docs/API-DECISIONS.md "Rate limits"). The clock that decides "hot" and "unused for a second" is
// stepped by the tests; the counts themselves are real Redis counters.

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const END = T0 + 3_600_000;

describe('LeaseBook', () => {
  const hot = (book: LeaseBook, key: string, requests: number, step: () => void) => {
    for (let i = 0; i < requests; i++) book.note(key, END);
    step();
    book.note(key, END);
  };

  it('a key is hot after HOT_PER_SECOND requests in the previous second; it asks for one block at a time, ahead of need', () => {
    let now = T0;
    const book = new LeaseBook(() => now);
    hot(book, 'k', HOT_PER_SECOND - 1, () => (now += 1_000));
    assert.equal(book.refillSize('k'), 0, `${HOT_PER_SECOND - 1} requests last second: not hot`);
    hot(book, 'k', 40, () => (now += 1_000));
    assert.equal(book.refillSize('k'), 11, 'a quarter of the 41 requests of the previous second');
    const pending = Promise.resolve();
    book.setRefill('k', pending);
    assert.equal(book.refilling('k'), pending);
    assert.equal(book.refillSize('k'), 0, 'one block asked for at a time');
    book.granted('k', 101, 111);
    book.setRefill('k', undefined);
    assert.equal(book.refillSize('k'), 0, '11 held: enough');
    assert.deepEqual([book.take('k'), book.take('k')], [101, 102]);
    assert.equal(book.unused('k'), 9);
    for (let i = 0; i < 4; i++) book.take('k');
    assert.equal(book.refillSize('k'), 11, 'fewer than half a block held: the next one is asked for');
    book.granted('k', 150, 160);
    assert.equal(book.unused('k'), 16);
    assert.deepEqual(
      Array.from({ length: 7 }, () => book.take('k')),
      [107, 108, 109, 110, 111, 150, 151],
      'blocks used in order',
    );
    for (let i = 0; i < 9; i++) book.take('k');
    assert.equal(book.take('k'), undefined);
    now += 1_000;
    book.note('k', END);
    assert.equal(book.refillSize('k'), 0, 'one request in the previous second: no longer hot');
  });

  it('a block is at most LEASE_MAX; after a single count (the limit is near) no more blocks are asked for', () => {
    let now = T0;
    const book = new LeaseBook(() => now);
    hot(book, 'k', 1000, () => (now += 1_000));
    assert.equal(book.refillSize('k'), LEASE_MAX);
    book.granted('k', 990, 990);
    book.take('k');
    assert.equal(book.refillSize('k'), 0);
  });

  it('blocks of a key unused for RETURN_AFTER_MS are given back; those of a window that is over are dropped', () => {
    let now = T0;
    const book = new LeaseBook(() => now);
    book.note('old', T0 + 1_500);
    now += 1_000;
    book.note('k', END);
    book.granted('k', 1, 25);
    book.granted('k', 40, 50);
    book.granted('old', 1, 25);
    book.take('k');
    book.take('k');
    now += RETURN_AFTER_MS - 1;
    assert.deepEqual(book.sweep(), [], 'used a moment ago');
    now += 1;
    assert.deepEqual(book.sweep(), [
      { key: 'k', next: 3, last: 25, windowEnd: END },
      { key: 'k', next: 40, last: 50, windowEnd: END },
    ]);
    assert.equal(book.unused('k'), 0);
    assert.equal(book.size, 1, "'old' is forgotten (its window is over), 'k' only once quiet for a second");
    now += 1_000;
    book.sweep();
    assert.equal(book.size, 0);
  });

  it('sweep(true) gives back every block (shutdown)', () => {
    const book = new LeaseBook(() => T0);
    book.note('k', END);
    book.granted('k', 41, 65);
    book.take('k');
    assert.deepEqual(book.sweep(true), [{ key: 'k', next: 42, last: 65, windowEnd: END }]);
  });
});

const REDIS_URL = process.env.REDIS_URL;
const skip = REDIS_URL ? false : 'REDIS_URL is not set: the Redis limiter is tested in the PostgreSQL + Redis pass';
const silent = { warn: () => undefined, info: () => undefined };

describe('leases shared by two limiters on one Redis', { skip }, () => {
  const prefix = `pricehound-test-leases-${process.pid}-${Date.now()}:`;
  // The lease clock starts early in the current hour, so however far the tests step it, a block
  // is never taken for one of a window that is over (whose blocks are dropped, not given back).
  let clock = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1_000;
  const a = new RedisRateLimiter(REDIS_URL ?? '', silent, prefix, () => clock);
  const b = new RedisRateLimiter(REDIS_URL ?? '', silent, prefix, () => clock);
  let redis: Redis;
  before(async () => {
    redis = new Redis(REDIS_URL!);
    await Promise.all([a.connect(), b.connect()]);
    await Promise.all([a.subscribedNow(), b.subscribedNow()]);
  });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  let n = 0;
  const fresh = (limit: number): { window: Window; guard: Window } => {
    n++;
    return {
      window: { key: `key:k${n}`, limit, seconds: 3600 },
      guard: { key: `authfail:10.0.0.${n}`, limit: 3, seconds: 3600 },
    };
  };
  /** The key's Redis counter: counts handed out, to requests or in blocks. */
  const counter = async (w: Window) => {
    const [key] = await redis.keys(`${prefix}3600:*:${w.key}`);
    return key ? Number(await redis.get(key)) : 0;
  };

  /** `count` requests through `l`, in order; their Remaining values and whether each was allowed. */
  async function requests(l: RedisRateLimiter, k: { window: Window; guard: Window }, count: number) {
    const out: { remaining: number; allowed: boolean; blocked: boolean }[] = [];
    for (let i = 0; i < count; i++) {
      const r = await l.take(k.window, k.guard, 'hit');
      out.push(
        r.blocked
          ? { remaining: 0, allowed: false, blocked: true }
          : { remaining: r.state.remaining, allowed: r.state.allowed, blocked: false },
      );
    }
    return out;
  }

  /** Makes the key hot at each limiter: HOT_PER_SECOND requests, then the clock moves a second on. */
  async function heat(k: { window: Window; guard: Window }, ...at: RedisRateLimiter[]) {
    for (const l of at) await requests(l, k, HOT_PER_SECOND);
    clock += 1_000;
  }

  it('a hot key takes blocks of counts in one round trip each and counts from them without Redis', async () => {
    // (counts live in the hour's window: a test that spans the top of the hour runs again)
    await inOneHour(async () => {
      const k = fresh(10_000);
      await heat(k, a);
      assert.equal(await counter(k.window), HOT_PER_SECOND, 'not hot yet: one count per request');
      const calls = a.stats.redisCalls;
      const leased = a.stats.leasedCounts;
      const r = await requests(a, k, 100);
      assert.deepEqual(
        r.map((x) => x.remaining),
        Array.from({ length: 100 }, (_, i) => 10_000 - HOT_PER_SECOND - 1 - i),
        'one process: consecutive',
      );
      assert.equal(a.stats.leasedCounts - leased, 100);
      assert.ok(
        a.stats.redisCalls - calls <= 100 / 5 + 1,
        `${a.stats.redisCalls - calls} script calls for 100 requests (blocks of 5)`,
      );
      const held = (await counter(k.window)) - HOT_PER_SECOND - 100;
      assert.ok(held >= 0 && held <= 10, `${held} counts held ahead`);
      const peek = await a.take(k.window, k.guard, 'peek');
      assert.equal(peek.state?.count, HOT_PER_SECOND + 100, 'usage counts requests, not the counts held');
    });
  });

  it('two processes never hand out a count twice, and serve exactly the limit between them', async () => {
    // (counts live in the hour's window: a test that spans the top of the hour runs again)
    await inOneHour(async () => {
      const k = fresh(1_000);
      await heat(k, a, b);
      const seen: number[] = [];
      let refused = 0;
      for (let i = 0; i < 1_040; i++) {
        const [r] = await requests(i % 2 === 0 ? a : b, k, 1);
        if (r!.allowed) seen.push(r!.remaining);
        else refused++;
        if (i % 100 === 99) clock += 1_000; // stays hot: 50 requests a second at each
      }
      assert.equal(seen.length, 960, '1000 minus the 40 requests that heated the key');
      assert.equal(new Set(seen).size, 960, 'each Remaining once');
      assert.equal(refused, 80);
    });
  });

  it('a block left unused is given back, and requests past the limit at the other process use it', async () => {
    // (counts live in the hour's window: a test that spans the top of the hour runs again)
    await inOneHour(async () => {
      const k = fresh(1_000);
      await heat(k, a);
      await requests(a, k, 1); // takes a block of 5 and uses its first count
      const held = 4;
      assert.equal(await counter(k.window), HOT_PER_SECOND + 5);
      // b serves up to the limit: everything a holds is missing at b ...
      const atB = await requests(b, k, 1_000 - HOT_PER_SECOND - 5 + 1);
      assert.equal(atB.filter((x) => x.allowed).length, 1_000 - HOT_PER_SECOND - 5, 'early 429: a still holds 4');
      // ... until a gives its block back, unused for RETURN_AFTER_MS.
      const returned = once(a, 'returned');
      clock += RETURN_AFTER_MS;
      const [counts] = (await returned) as [number];
      assert.ok(counts >= held, `${counts} given back (with blocks of the tests before)`);
      const more = await requests(b, k, held + 1);
      assert.deepEqual(
        more.map((x) => x.allowed),
        [true, true, true, true, false],
        'the given-back counts, then the limit',
      );
      assert.deepEqual(
        more.slice(0, 4).map((x) => x.remaining),
        [978, 977, 976, 975],
        "counts 22-25, a's unused block",
      );
      const usage = await b.take(k.window, k.guard, 'peek');
      assert.equal(usage.state?.remaining, 0);
    });
  });

  it('a failed authentication at one process stops the other counting from its block for that address', async () => {
    // (counts live in the hour's window: a test that spans the top of the hour runs again)
    await inOneHour(async () => {
      const k = fresh(10_000);
      await heat(k, a);
      await requests(a, k, 1); // a holds a block, the address is known clean
      const before = await counter(k.window);
      await requests(a, k, 1);
      assert.equal(await counter(k.window), before, 'from the block');

      const announced = once(a, 'announced');
      for (let i = 0; i < 3; i++) await b.hit(k.guard);
      await announced;
      const [r] = await requests(a, k, 1);
      assert.deepEqual(r, { remaining: 0, allowed: false, blocked: true }, 'the address is blocked at a too');
    });
  });
});
