/**
 * robots.txt: honoured unless the request opts out, matched for our token then "*", cached per
 * origin, and the RFC 9309 rules for robots.txt that cannot be read.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { createHttpFetcher, type HttpFetcher } from '../../src/fetcher/http.js';
import { RobotsCache, type RobotsResponse } from '../../src/fetcher/robots.js';
import { FetchError } from '../../src/fetcher/types.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site/server.js';
import { fetchError, testConfig } from './helpers/fetcher.js';

let site: FixtureSite;
let fetcher: HttpFetcher;
before(async () => {
  site = await startFixtureSite();
});
after(() => site.close());
afterEach(async () => {
  await fetcher?.close();
  site.setRobots(null);
  site.clearLog();
});
const fresh = (): HttpFetcher => (fetcher = createHttpFetcher(testConfig()));

describe('robots.txt through the fetcher', () => {
  test('a disallowed path is refused without being requested', async () => {
    fresh();
    const err = await fetchError(fetcher.fetch({ url: `${site.url}/private/jsonld-basic.html`, respectRobots: true }));
    assert.equal(err.code, 'robots_disallowed');
    assert.equal(
      err.message,
      `robots.txt of 127.0.0.1:${site.port} disallows /private/jsonld-basic.html for pricehound (line 6); the listing can opt out of robots.txt if you may fetch it anyway`,
    );
    assert.equal(site.hits('/robots.txt'), 1);
    assert.equal(site.hits('/private/jsonld-basic.html'), 0);
  });

  test('our group replaces "*": /no-pricehound/ is refused, /no-others/ is allowed', async () => {
    fresh();
    assert.equal(
      (await fetchError(fetcher.fetch({ url: `${site.url}/no-pricehound/og-sale-price.html`, respectRobots: true })))
        .code,
      'robots_disallowed',
    );
    assert.equal(
      (await fetcher.fetch({ url: `${site.url}/no-others/og-sale-price.html`, respectRobots: true })).status,
      200,
    );
  });

  test('opting out fetches the page and never asks for robots.txt', async () => {
    fresh();
    const page = await fetcher.fetch({ url: `${site.url}/private/jsonld-basic.html`, respectRobots: false });
    assert.equal(page.status, 200);
    assert.equal(site.hits('/robots.txt'), 0);
  });

  test('robots.txt is fetched once per origin, also by a burst of first fetches', async () => {
    fresh();
    await Promise.all(site.pages.slice(0, 10).map((f) => fetcher.fetch({ url: site.pageUrl(f), respectRobots: true })));
    for (const f of site.pages.slice(10, 20)) await fetcher.fetch({ url: site.pageUrl(f), respectRobots: true });
    assert.equal(site.hits('/robots.txt'), 1);
    assert.equal(site.requests.find((r) => r.path === '/robots.txt')?.userAgent, testConfig().userAgent);
  });

  test('the robots.txt request comes first', async () => {
    fresh();
    await fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true });
    assert.deepEqual(
      site.requests.map((r) => r.path),
      ['/robots.txt', '/pages/jsonld-basic.html'],
    );
  });

  test('a missing robots.txt (404) allows everything', async () => {
    fresh();
    site.setRobots({ status: 404, body: 'no' });
    assert.equal(
      (await fetcher.fetch({ url: `${site.url}/private/jsonld-basic.html`, respectRobots: true })).status,
      200,
    );
  });

  test('a robots.txt that fails (500) disallows everything for now', async () => {
    fresh();
    site.setRobots({ status: 500, body: 'oops' });
    const err = await fetchError(fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true }));
    assert.equal(err.code, 'robots_disallowed');
    assert.match(
      err.message,
      /^robots\.txt of 127\.0\.0\.1:\d+ could not be read \(the site answered 500\), so nothing there is fetched for now/,
    );
    assert.equal(site.hits('/pages/jsonld-basic.html'), 0);
  });

  test('a robots.txt that stalls counts as unreachable: disallowed', async () => {
    fetcher = createHttpFetcher(testConfig({ fetchTimeoutMs: 200 }));
    site.setRobots({ status: 200, body: '', delayMs: 60_000 });
    const err = await fetchError(fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true }));
    assert.equal(err.code, 'robots_disallowed');
    assert.match(err.message, /robots\.txt did not load within 0\.2 s/);
  });

  test("a caller's signal stops waiting for a slow robots.txt", async () => {
    fresh();
    site.setRobots({ status: 200, body: '', delayMs: 60_000 });
    const ac = new AbortController();
    const arrived = site.waitForRequests(1, (r) => r.path === '/robots.txt');
    const p = fetcher.fetch({ url: site.pageUrl('jsonld-basic.html'), respectRobots: true, signal: ac.signal });
    await arrived;
    ac.abort(new Error('stop'));
    await assert.rejects(p, { message: 'stop' });
  });

  test('wildcards and $ anchors', async () => {
    fresh();
    site.setRobots('User-agent: *\nDisallow: /*.json$\nDisallow: /pages/*sale\nAllow: /pages/og-sale-price.html\n');
    assert.equal(
      (await fetchError(fetcher.fetch({ url: `${site.url}/files/data.json`, respectRobots: true }))).code,
      'robots_disallowed',
    );
    assert.equal(
      (await fetchError(fetcher.fetch({ url: site.pageUrl('woocommerce-sale.html'), respectRobots: true }))).code,
      'robots_disallowed',
    );
    assert.equal((await fetcher.fetch({ url: site.pageUrl('og-sale-price.html'), respectRobots: true })).status, 200);
    assert.equal((await fetcher.fetch({ url: `${site.url}/files/data.json?x=1`, respectRobots: true })).status, 200);
  });

  test('Crawl-delay for our token spaces request starts', async () => {
    fresh();
    site.setRobots('User-agent: pricehound\nCrawl-delay: 0.3\nDisallow: /private/\n');
    await Promise.all(
      ['jsonld-basic.html', 'og-sale-price.html'].map((f) =>
        fetcher.fetch({ url: site.pageUrl(f), respectRobots: true }),
      ),
    );
    const robots = site.requests.filter((r) => r.path === '/robots.txt').map((r) => r.receivedAt);
    const [, b] = site.requests.filter((r) => r.path.startsWith('/pages/')).map((r) => r.receivedAt);
    // The first page starts only after robots.txt was answered, and the second 300 ms after the
    // first starts, so the second page reaches the site at least 300 ms after robots.txt did.
    // (Measured from robots.txt, not from the first page's arrival, which a slow connection
    // set-up on a loaded machine can delay towards the second's; without the delay both pages
    // arrive within a few ms of robots.txt.)
    assert.equal(robots.length, 1);
    assert.ok(b! - robots[0]! >= 300, `second page ${Math.round(b! - robots[0]!)} ms after robots.txt`);
  });

  test('checkRobots (for the browser fetcher)', async () => {
    fresh();
    await fetcher.checkRobots(site.pageUrl('jsonld-basic.html'));
    assert.equal((await fetchError(fetcher.checkRobots(`${site.url}/private/x`))).code, 'robots_disallowed');
    assert.equal(site.hits('/robots.txt'), 1);
  });
});

describe('RobotsCache rules (unit)', () => {
  const url = new URL('https://shop.test/p/1');
  function cache(answer: () => RobotsResponse, now = { t: 0 }): RobotsCache & { asked: () => number } {
    let asked = 0;
    const c = new RobotsCache({
      token: 'pricehound',
      ttlMs: 3_600_000,
      failureTtlMs: 60_000,
      now: () => now.t,
      fetchRobots: async () => {
        asked++;
        return answer();
      },
    });
    return Object.assign(c, { asked: () => asked });
  }

  test('2xx rules are cached for the TTL, then asked again', async () => {
    const now = { t: 0 };
    const c = cache(() => ({ status: 200, body: 'User-agent: *\nDisallow: /admin' }), now);
    await c.check(url);
    now.t = 3_599_000;
    await c.check(url);
    assert.equal(c.asked(), 1);
    now.t = 3_600_001;
    await c.check(url);
    assert.equal(c.asked(), 2);
  });

  for (const status of [400, 401, 403, 404, 410]) {
    test(`${status}: everything allowed`, async () => {
      await cache(() => ({ status, body: '' })).check(url);
    });
  }

  for (const status of [429, 500, 502, 503]) {
    test(`${status}: everything disallowed, asked again after the failure TTL`, async () => {
      const now = { t: 0 };
      let s = status;
      const c = cache(() => ({ status: s, body: '' }), now);
      assert.equal((await fetchError(c.check(url))).code, 'robots_disallowed');
      now.t = 59_000;
      assert.equal((await fetchError(c.check(url))).code, 'robots_disallowed');
      assert.equal(c.asked(), 1);
      s = 404;
      now.t = 60_001;
      await c.check(url);
      assert.equal(c.asked(), 2);
    });
  }

  test('unreachable (a network error): disallowed', async () => {
    const err = await fetchError(
      cache(() => ({ error: new FetchError('network', 'shop.test refused the connection (ECONNREFUSED)') })).check(url),
    );
    assert.equal(err.code, 'robots_disallowed');
    assert.match(err.message, /could not be read \(shop\.test refused the connection/);
  });

  test('too many redirects: treated as unavailable, allowed', async () => {
    await cache(() => ({ error: new FetchError('too_many_redirects', 'loop') })).check(url);
  });

  test('a host paused by Retry-After: the pause error itself, not cached', async () => {
    const paused = new FetchError('http_error', 'shop.test asked us to wait', 429, { retryAfterMs: 5000 });
    let answer: RobotsResponse = { error: paused };
    const c = cache(() => answer);
    assert.equal(await fetchError(c.check(url)), paused);
    answer = { status: 200, body: '' };
    await c.check(url);
    assert.equal(c.asked(), 2);
  });

  test('the group is matched by product token, case-insensitively', async () => {
    const c = cache(() => ({ status: 200, body: 'User-agent: *\nDisallow: /\n\nUser-agent: PriceHound\nAllow: /\n' }));
    await c.check(url);
  });

  test('Crawl-delay is reported in ms, capped at 60 s', async () => {
    const seen: Array<[string, number]> = [];
    const c = new RobotsCache({
      token: 'pricehound',
      fetchRobots: async () => ({ status: 200, body: 'User-agent: pricehound\nCrawl-delay: 600\n' }),
      onCrawlDelay: (host, ms) => seen.push([host, ms]),
    });
    await c.check(url);
    assert.deepEqual(seen, [['shop.test', 60_000]]);
  });
});
