/**
 * Per-host politeness: concurrency, the gap between request starts, Retry-After pauses. The
 * fixture site's log (arrival and finish times, in-flight count) is the witness; /hold/<key>
 * keeps requests open until the test releases them, so overlap is observed, not timed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomainLimiter } from '../../src/fetcher/domain-limiter.js';
import { createHttpFetcher } from '../../src/fetcher/http.js';
import { MAX_RETRY_AFTER_MS } from '../../src/fetcher/retry-after.js';
import { FetchError } from '../../src/fetcher/types.js';
import { startFixtureSite, type FixtureSite, type LoggedRequest } from '../fixtures/site/server.js';
import { fetchError, tableLookup, testConfig } from './helpers/fetcher.js';

let site: FixtureSite;
before(async () => {
  site = await startFixtureSite();
});
after(() => site.close());

/** Most requests open at once, from the log's arrival and finish times. */
function maxOverlap(reqs: LoggedRequest[]): number {
  const events = reqs.flatMap((r) => [
    { t: r.receivedAt, d: 1 },
    { t: r.finishedAt ?? Number.POSITIVE_INFINITY, d: -1 },
  ]);
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let open = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (open += e.d));
  return max;
}

const lookup = tableLookup({ 'a.test': ['127.0.0.1'], 'b.test': ['127.0.0.1'] });

describe('per-host concurrency', () => {
  test('FETCH_DOMAIN_CONCURRENCY=2: six fetches, never more than two at the site at once', async () => {
    const fetcher = createHttpFetcher(testConfig({ fetchDomainConcurrency: 2 }));
    const isHold = (r: LoggedRequest): boolean => r.path.startsWith('/hold/c2');
    try {
      let arrived = site.waitForRequests(2, isHold);
      const all = Promise.all(
        Array.from({ length: 6 }, () => fetcher.fetch({ url: `${site.url}/hold/c2`, respectRobots: false })),
      );
      for (let round = 0; round < 3; round++) {
        await arrived;
        assert.equal(site.inFlight(isHold), 2);
        assert.deepEqual(fetcher.limiter.stats('127.0.0.1'), { active: 2, queued: 4 - 2 * round });
        arrived = site.waitForRequests(Math.min(2, 4 - 2 * round), isHold);
        site.release('c2');
      }
      const pages = await all;
      assert.equal(pages.length, 6);
      assert.equal(maxOverlap(site.requests.filter(isHold)), 2);
    } finally {
      await fetcher.close();
    }
  });

  test('hosts do not wait for each other', async () => {
    const fetcher = createHttpFetcher(testConfig({ fetchDomainConcurrency: 1 }), { lookup });
    try {
      const arrived = site.waitForRequests(1, (r) => r.path === '/hold/a');
      const held = fetcher.fetch({ url: `http://a.test:${site.port}/hold/a`, respectRobots: false });
      await arrived;
      // a.test is at its limit; b.test (same server, other name) goes straight through.
      const other = await fetcher.fetch({
        url: `http://b.test:${site.port}/pages/jsonld-basic.html`,
        respectRobots: false,
      });
      assert.equal(other.status, 200);
      assert.deepEqual(fetcher.limiter.stats('a.test'), { active: 1, queued: 0 });
      site.release('a');
      assert.equal((await held).status, 200);
    } finally {
      await fetcher.close();
    }
  });
});

describe('per-host delay', () => {
  test('FETCH_DOMAIN_DELAY_MS=150: request starts at one host are at least 150 ms apart', async () => {
    // The limiter spaces request STARTS; arrival times at the site also carry the loaded
    // machine's scheduling jitter, so the gaps are measured where the fetcher starts a request.
    const starts: number[] = [];
    const fetcher = createHttpFetcher(testConfig({ fetchDomainDelayMs: 150 }), {
      lookup,
      onRequest: () => starts.push(performance.now()),
    });
    const url = `http://a.test:${site.port}/pages/jsonld-basic.html`;
    try {
      // One fetch first, so the measured ones all reuse its connection: a new connection's
      // set-up time would otherwise shift one arrival against the others.
      await fetcher.fetch({ url, respectRobots: false });
      site.clearLog();
      starts.length = 0;
      await Promise.all([0, 1, 2].map(() => fetcher.fetch({ url, respectRobots: false })));
      assert.equal(site.requests.length, 3);
      assert.equal(starts.length, 3);
      for (let i = 1; i < 3; i++)
        assert.ok(starts[i]! - starts[i - 1]! >= 149, `gap ${Math.round(starts[i]! - starts[i - 1]!)} ms`);
    } finally {
      await fetcher.close();
    }
  });

  test('a redirect hop to the same host waits its turn too', async () => {
    const starts: number[] = [];
    const fetcher = createHttpFetcher(testConfig({ fetchDomainDelayMs: 150 }), {
      onRequest: () => starts.push(performance.now()),
    });
    try {
      await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false }); // warm connection
      site.clearLog();
      starts.length = 0;
      await fetcher.fetch({ url: `${site.url}/redirect/chain/1`, respectRobots: false });
      assert.equal(site.requests.length, 2);
      const [a, b] = starts;
      assert.ok(b! - a! >= 149, `gap ${Math.round(b! - a!)} ms`);
    } finally {
      await fetcher.close();
    }
  });
});

describe('Retry-After', () => {
  test('a 429 with Retry-After: 120 pauses the host; the next fetch fails at once without a request', async () => {
    const fetcher = createHttpFetcher(testConfig(), { lookup });
    try {
      const err = await fetchError(
        fetcher.fetch({ url: `http://a.test:${site.port}/status/429?retry-after=120`, respectRobots: false }),
      );
      assert.equal(err.code, 'http_error');
      assert.equal(err.status, 429);
      assert.equal(err.retryAfterMs, 120_000);
      assert.equal(err.message, 'the page answered 429 Too Many Requests; it asks us to wait 120 s (Retry-After)');
      site.clearLog();
      const again = await fetchError(
        fetcher.fetch({ url: `http://a.test:${site.port}/pages/jsonld-basic.html`, respectRobots: true }),
      );
      assert.equal(again.code, 'http_error');
      assert.equal(again.status, 429);
      assert.ok(again.retryAfterMs! > 119_000 && again.retryAfterMs! <= 120_000);
      assert.match(again.message, /^a\.test asked us to wait \(429, Retry-After\) until \d{4}-\d\d-\d\dT/);
      assert.equal(site.requests.length, 0, 'nothing was sent, not even robots.txt');
      // Another host is not affected.
      assert.equal(
        (await fetcher.fetch({ url: `http://b.test:${site.port}/pages/jsonld-basic.html`, respectRobots: false }))
          .status,
        200,
      );
    } finally {
      await fetcher.close();
    }
  });

  test('a short Retry-After delays the next request until it has passed', async () => {
    const fetcher = createHttpFetcher(testConfig());
    try {
      await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false }); // warm connection
      site.clearLog();
      const err = await fetchError(
        fetcher.fetch({ url: `${site.url}/status/503?retry-after=1`, respectRobots: false }),
      );
      assert.equal(err.status, 503);
      assert.equal(err.retryAfterMs, 1000);
      await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: false });
      const [a, b] = site.requests.map((r) => r.receivedAt);
      assert.ok(b! - a! >= 990, `second request ${Math.round(b! - a!)} ms after the 503`);
    } finally {
      await fetcher.close();
    }
  });

  test('a Retry-After longer than MAX_RETRY_AFTER_MS (6 h) is honoured for 6 h only', async () => {
    const fetcher = createHttpFetcher(testConfig(), { lookup });
    try {
      const err = await fetchError(
        fetcher.fetch({ url: `http://a.test:${site.port}/status/429?retry-after=86400`, respectRobots: false }),
      );
      assert.equal(MAX_RETRY_AFTER_MS, 6 * 3_600_000);
      assert.equal(err.retryAfterMs, MAX_RETRY_AFTER_MS);
      assert.equal(err.message, 'the page answered 429 Too Many Requests; it asks us to wait 21600 s (Retry-After)');
      assert.ok(fetcher.limiter.pausedFor('a.test') > MAX_RETRY_AFTER_MS - 1_000);
      assert.ok(fetcher.limiter.pausedFor('a.test') <= MAX_RETRY_AFTER_MS);
    } finally {
      await fetcher.close();
    }
  });

  test('a 503 without Retry-After does not pause; a 429 without one pauses for the default', async () => {
    const fetcher = createHttpFetcher(testConfig(), { lookup, defaultRetryAfterMs: 30_000 });
    try {
      assert.equal(
        (await fetchError(fetcher.fetch({ url: `http://a.test:${site.port}/status/503`, respectRobots: false })))
          .retryAfterMs,
        undefined,
      );
      assert.equal(fetcher.limiter.pausedFor('a.test'), 0);
      assert.equal(
        (await fetchError(fetcher.fetch({ url: `http://b.test:${site.port}/status/429`, respectRobots: false })))
          .retryAfterMs,
        30_000,
      );
      assert.ok(fetcher.limiter.pausedFor('b.test') > 29_000);
    } finally {
      await fetcher.close();
    }
  });
});

describe('DomainLimiter (unit)', () => {
  test('FIFO per host; a release lets the next waiter in', async () => {
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0 });
    const order: number[] = [];
    const r0 = await l.acquire('h');
    const waiting = [1, 2, 3].map((i) => l.acquire('h').then((release) => (order.push(i), release)));
    assert.deepEqual(l.stats('h'), { active: 1, queued: 3 });
    r0();
    for (const w of waiting) (await w)();
    assert.deepEqual(order, [1, 2, 3]);
    assert.deepEqual(l.stats('h'), { active: 0, queued: 0 });
  });

  test('release is idempotent', async () => {
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0 });
    const r = await l.acquire('h');
    r();
    r();
    assert.deepEqual(l.stats('h'), { active: 0, queued: 0 });
  });

  test("an aborted waiter leaves the queue with the signal's reason", async () => {
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0 });
    const r = await l.acquire('h');
    const ac = new AbortController();
    const p = l.acquire('h', ac.signal);
    ac.abort(new Error('gone'));
    await assert.rejects(p, { message: 'gone' });
    assert.deepEqual(l.stats('h'), { active: 1, queued: 0 });
    r();
    (await l.acquire('h'))();
  });

  test('a waiter gives up after maxWaitMs with a timeout FetchError', async () => {
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0, maxWaitMs: 20 });
    await l.acquire('h');
    const err = await fetchError(l.acquire('h'));
    assert.equal(err.code, 'timeout');
    assert.match(err.message, /for a turn at h/);
  });

  test('a pause longer than maxWaitMs refuses at once; a shorter one is waited out', async () => {
    let now = 1_000_000;
    const l = new DomainLimiter({ concurrency: 4, delayMs: 0, maxWaitMs: 10_000, now: () => now });
    l.pause('h', 60_000, 429);
    const err = await fetchError(l.acquire('h'));
    assert.ok(err instanceof FetchError);
    assert.equal(err.status, 429);
    assert.equal(err.retryAfterMs, 60_000);
    now += 55_000;
    const p = l.acquire('h');
    assert.deepEqual(l.stats('h'), { active: 0, queued: 1 });
    now += 5_000;
    // The limiter's timer fires after the remaining 5 s of (real) time; the test cannot
    // advance real timers, so close() stands in and the waiter is rejected, proving it waited.
    l.close(new Error('closed'));
    await assert.rejects(p, { message: 'closed' });
  });

  test('the delay counts from when the request went out, not only from its grant', async () => {
    let now = 1_000;
    const l = new DomainLimiter({ concurrency: 2, delayMs: 150, now: () => now });
    (await l.acquire('h'))(); // granted at 1 000
    now = 1_040; // the event loop was busy: the request only goes out 40 ms later
    l.markStarted('h');
    now = 1_160; // 160 ms after the grant but 120 ms after the request went out
    const p = l.acquire('h');
    assert.deepEqual(l.stats('h'), { active: 0, queued: 1 }, 'still waiting for 1 190');
    l.close(new Error('closed'));
    await assert.rejects(p, { message: 'closed' });
    const l2 = new DomainLimiter({ concurrency: 2, delayMs: 150, now: () => now });
    (await l2.acquire('h'))();
    now += 150;
    l2.markStarted('unknown-host'); // a host the limiter never granted is ignored
    (await l2.acquire('h'))(); // without markStarted, the grant alone sets the gap
  });

  test('pauses only extend', () => {
    let now = 0;
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0, now: () => now });
    l.pause('h', 10_000, 503);
    l.pause('h', 5_000, 429);
    assert.equal(l.pausedFor('h'), 10_000);
    now = 4_000;
    assert.equal(l.pausedFor('h'), 6_000);
  });

  test('close rejects every waiter', async () => {
    const l = new DomainLimiter({ concurrency: 1, delayMs: 0 });
    await l.acquire('h');
    const p = l.acquire('h');
    l.close();
    const err = await fetchError(p);
    assert.equal(err.message, 'the fetcher has been closed');
  });
});
