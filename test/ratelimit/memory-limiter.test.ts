import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateLimiter, type Window } from '../../src/ratelimit/limiter.js';

// The in-memory limiter with a clock we move by hand: windows are fixed and aligned to the top
// of the UTC hour, so the count starts again exactly at the boundary and not a millisecond early.

const HOUR_MS = 3_600_000;
const T0 = Date.UTC(2030, 0, 1, 10, 0, 0); // 10:00:00.000 UTC
const key = (limit: number): Window => ({ key: 'key:k1', limit, seconds: 3600 });
const guard = (limit = 5): Window => ({ key: 'authfail:127.0.0.1', limit, seconds: 900 });

function clock(start: number) {
  const c = { now: start, limiter: undefined as unknown as MemoryRateLimiter };
  c.limiter = new MemoryRateLimiter(() => c.now);
  return c;
}

describe('MemoryRateLimiter windows', () => {
  it('counts down remaining and refuses the request after the limit', async () => {
    const c = clock(T0 + 5 * 60_000);
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const o = await c.limiter.take(key(3), guard(), 'hit');
      assert.ok(o.state);
      assert.equal(o.state.allowed, true);
      seen.push(o.state.remaining);
    }
    assert.deepEqual(seen, [2, 1, 0]);
    const over = await c.limiter.take(key(3), guard(), 'hit');
    assert.deepEqual(over.state, { count: 4, limit: 3, remaining: 0, reset: (T0 + HOUR_MS) / 1000, allowed: false });
    await c.limiter.close();
  });

  it('resets at the top of the UTC hour, not before', async () => {
    const c = clock(T0 + HOUR_MS - 1); // 10:59:59.999
    for (let i = 0; i < 2; i++) await c.limiter.take(key(2), guard(), 'hit');
    const last = await c.limiter.take(key(2), guard(), 'hit');
    assert.equal(last.state?.allowed, false);
    assert.equal(last.state?.reset, (T0 + HOUR_MS) / 1000);

    c.now = T0 + HOUR_MS; // 11:00:00.000: a new window
    const fresh = await c.limiter.take(key(2), guard(), 'hit');
    assert.deepEqual(fresh.state, {
      count: 1,
      limit: 2,
      remaining: 1,
      reset: (T0 + 2 * HOUR_MS) / 1000,
      allowed: true,
    });
    await c.limiter.close();
  });

  it('reset is the next top of the hour from anywhere inside the hour', async () => {
    for (const offset of [0, 1, 30 * 60_000, HOUR_MS - 1]) {
      const c = clock(T0 + offset);
      const o = await c.limiter.take(key(10), guard(), 'hit');
      assert.equal(o.state?.reset, (T0 + HOUR_MS) / 1000, `offset ${offset}`);
      await c.limiter.close();
    }
  });

  it('peek reads the window without counting', async () => {
    const c = clock(T0);
    await c.limiter.take(key(10), guard(), 'hit');
    for (let i = 0; i < 3; i++) {
      const p = await c.limiter.take(key(10), guard(), 'peek');
      assert.equal(p.state?.remaining, 9);
      assert.equal(p.state?.count, 1);
    }
    const h = await c.limiter.take(key(10), guard(), 'hit');
    assert.equal(h.state?.remaining, 8);
    await c.limiter.close();
  });

  it('keys count separately', async () => {
    const c = clock(T0);
    await c.limiter.take(key(10), guard(), 'hit');
    await c.limiter.take(key(10), guard(), 'hit');
    const other = await c.limiter.take({ key: 'key:k2', limit: 10, seconds: 3600 }, guard(), 'hit');
    assert.equal(other.state?.remaining, 9);
    await c.limiter.close();
  });

  it('a guard at its limit blocks without counting the key', async () => {
    const c = clock(T0 + 60_000);
    for (let i = 1; i <= 2; i++) assert.equal((await c.limiter.hit(guard(2))).allowed, true);
    assert.equal((await c.limiter.hit(guard(2))).allowed, false);
    const o = await c.limiter.take(key(10), guard(2), 'hit');
    assert.ok(o.blocked);
    assert.equal(o.blocked.limit, 2);
    assert.equal(o.blocked.reset, (T0 + 900_000) / 1000); // 15-minute guard window: 10:15
    // the key was not counted while blocked
    c.now = T0 + 900_000; // the guard's window ended
    const after = await c.limiter.take(key(10), guard(2), 'hit');
    assert.equal(after.state?.remaining, 9);
    await c.limiter.close();
  });
});
