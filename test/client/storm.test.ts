import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createClient, RateLimitError, type RetryInfo, type Usage } from '../../clients/typescript/src/index.js';
import { KEY_PREFIX } from '../../src/auth/keys.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { hourStart, MINUTE_MS } from '../../src/time.js';
import { nextHour } from '../ratelimit/support.js';
import { makeKeys } from './support.js';

// 429 storms against a real server process: the free plan's hourly limit (a wait longer than the
// client allows fails at once, typed), and a short block (the failed-authentication budget of an
// address, whose window is a setting) that every call of a concurrent storm waits out and survives.

const BLOCK_SECONDS = 5;

/**
 * The server's clock (TEST_CLOCK_OFFSET_MS) stands about a minute into the hour when it starts,
 * so the hourly window cannot turn while the test spends it; the offset is a whole number of
 * blocks, so the blocks of the failed-authentication window start when they do on this clock.
 */
const loaded = Date.now();
const OFFSET_MS = Math.floor((hourStart(loaded) + MINUTE_MS - loaded) / (BLOCK_SECONDS * 1000)) * BLOCK_SECONDS * 1000;
const serverNow = () => Date.now() + OFFSET_MS;

describe('the client in a 429 storm', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let free: string;
  let business: string;
  before(async () => {
    storage = await testStorage();
    [free, business] = (await makeKeys(storage, ['free', 'business'])) as [string, string];
    server = await spawnServer({
      ...storage.env,
      NODE_ENV: 'test',
      TEST_CLOCK_OFFSET_MS: String(OFFSET_MS),
      AUTH_FAILURE_LIMIT: '1',
      AUTH_FAILURE_WINDOW_SECONDS: String(BLOCK_SECONDS),
    });
  });
  after(async () => {
    await server?.stop();
    await storage?.cleanup();
  });

  it(
    'spends the free plan’s hour, alerts near its end once, then fails at once with the typed 429',
    { timeout: 300_000 },
    async () => {
      const absolute: Usage[] = [];
      const fraction: Usage[] = [];
      const retries: RetryInfo[] = [];
      const options = {
        baseUrl: server.url,
        apiKey: free,
        retry: { maxWaitMs: 10_000 },
        onRetry: (r: RetryInfo) => retries.push(r),
      };
      const first = createClient({ ...options, usageAlert: { remaining: 500, onLow: (u) => absolute.push(u) } });
      const second = createClient({ ...options, usageAlert: { fraction: 0.1, onLow: (u) => fraction.push(u) } });
      const run = async (client: typeof first, count: number) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next++ < count) await client.GET('/api/v1/products', { params: { query: { limit: 1 } } });
          }),
        );
      };
      await run(first, 600);
      await run(second, 400);
      const reset = nextHour(serverNow());
      assert.equal(absolute.length, 1, 'the alert fires once per window');
      assert.equal(absolute[0]!.limit, 1000);
      assert.ok(absolute[0]!.remaining < 500 && absolute[0]!.remaining >= 490, `fired at ${absolute[0]!.remaining}`);
      assert.equal(fraction.length, 1);
      assert.ok(fraction[0]!.remaining < 100 && fraction[0]!.remaining >= 90, `fired at ${fraction[0]!.remaining}`);
      assert.deepEqual(second.usage, { limit: 1000, remaining: 0, reset });

      const started = Date.now();
      const storm = await Promise.allSettled(Array.from({ length: 20 }, () => second.GET('/api/v1/products')));
      for (const r of storm) {
        assert.equal(r.status, 'rejected');
        const e = (r as PromiseRejectedResult).reason as RateLimitError;
        assert.ok(e instanceof RateLimitError, String(e));
        assert.equal(e.status, 429);
        assert.equal(e.code, 'rate_limited');
        assert.equal(e.limit, 1000);
        assert.equal(e.reset, reset);
        assert.ok(e.retryAfter! > 10, `retry_after ${e.retryAfter}`);
        assert.match(e.requestId ?? '', /^req_/);
      }
      assert.deepEqual(retries, [], 'a wait longer than maxWaitMs is not waited');
      assert.ok(Date.now() - started < 10_000);
    },
  );

  it(
    'retries every call of a concurrent storm after retry_after, and all of them succeed',
    { timeout: 120_000 },
    async () => {
      const retries: RetryInfo[] = [];
      const client = createClient({
        baseUrl: server.url,
        apiKey: business,
        retry: { maxAttempts: 4, baseDelayMs: 200 },
        onRetry: (r) => retries.push(r),
      });
      // Block the address at the beginning of a window, so that the block lasts (nearly) all of
      // it; on a machine so busy that the 401 came back late in the window, block the next one.
      let blockedUntil = 0;
      for (let tries = 0; tries < 3 && serverNow() > blockedUntil * 1000 - 2000; tries++) {
        await sleep(BLOCK_SECONDS * 1000 - (serverNow() % (BLOCK_SECONDS * 1000)) + 50);
        const bad = await fetch(`${server.url}/api/v1/products`, {
          headers: { authorization: `Bearer ${KEY_PREFIX}${'x'.repeat(43)}` },
        });
        assert.equal(bad.status, 401);
        blockedUntil = Number(bad.headers.get('x-ratelimit-reset'));
      }

      const done: number[] = [];
      const storm = await Promise.all(
        Array.from({ length: 30 }, async () => {
          const page = await client.GET('/api/v1/products', { params: { query: { limit: 1 } } });
          done.push(serverNow());
          return page;
        }),
      );
      assert.equal(storm.length, 30);
      for (const page of storm) assert.ok(Array.isArray(page.data));
      assert.ok(retries.length >= 30, `every call was refused at least once (${retries.length} retries)`);
      for (const r of retries) {
        assert.ok(r.error instanceof RateLimitError);
        assert.ok(r.error.retryAfter! >= 1);
        assert.ok(
          r.waitMs >= r.error.retryAfter! * 1000,
          `waited ${r.waitMs} ms for retry_after ${r.error.retryAfter}`,
        );
      }
      assert.ok(Math.min(...done) >= blockedUntil * 1000, 'no call got through before the block ended');
    },
  );
});
