import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExtractResult } from '../../src/checks/schemas.js';
import { useTestApp } from '../helpers/app.js';
import { MONITORING_ENV, useMonitoringTest } from '../jobs/support.js';

/** POST /api/v1/extract: the dry run. */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

const extract = (payload: unknown, headers = t.account.headers) =>
  t.app.inject({ method: 'POST', url: '/api/v1/extract', headers, payload: payload as object });

/** Rows in every table a check writes to or a listing lives in. */
async function tableCounts() {
  const r = await t.rt.db.query<Record<string, number>>(
    `select (select count(*)::int from listings) as listings, (select count(*)::int from listing_checks) as checks,
            (select count(*)::int from price_observations) as observations`,
  );
  return r.rows[0];
}

describe('POST /extract', () => {
  it('fetches the page, shows every candidate and the chosen one, and saves nothing', T, async () => {
    const before = await tableCounts();
    const res = await extract({ url: t.site.pageUrl('jsonld-sale-list-price.html') });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.headers['x-ratelimit-remaining'], 'rate-limited like every API route');
    const x = res.json<ExtractResult>();
    assert.equal(x.object, 'extraction');
    assert.equal(x.ok, true, x.error ?? '');
    assert.deepEqual([x.price, x.currency, x.source, x.in_stock], [79, 'USD', 'json-ld', true]);
    assert.equal(x.chosen?.price, 79);
    assert.equal(x.chosen?.chosen, true);
    assert.ok(
      x.candidates.some((c) => c.ignored !== null && !c.chosen),
      'the list price is listed as ignored',
    );
    assert.equal(x.failure, null);
    assert.ok(x.fetch);
    assert.equal(x.fetch.status, 200);
    assert.equal(x.fetch.final_url, t.site.pageUrl('jsonld-sale-list-price.html'));
    assert.ok(x.fetch.bytes > 500);
    assert.ok(x.fetch.ms >= 0);
    assert.match(x.fetch.content_type ?? '', /text\/html/);
    assert.deepEqual(await tableCounts(), before);
  });

  it('a selector pins the price; currency_override replaces the currency', T, async () => {
    const auto = (await extract({ url: t.site.pageUrl('selector-member-price.html') })).json<ExtractResult>();
    assert.equal(auto.price, 49.99);
    const res = await extract({
      url: t.site.pageUrl('selector-member-price.html'),
      selector: '.member-price',
      currency_override: 'gbp',
    });
    assert.equal(res.statusCode, 200, res.body);
    const pinned = res.json<ExtractResult>();
    assert.deepEqual([pinned.price, pinned.currency, pinned.source], [44.99, 'GBP', 'selector']);
  });

  it('a per-period price says its period; a one-off price says null', T, async () => {
    const res = await extract({ url: t.site.pageUrl('per-month-suffix.html'), selector: '.plan-price' });
    assert.equal(res.statusCode, 200, res.body);
    const x = res.json<ExtractResult>();
    assert.deepEqual([x.chosen?.price, x.chosen?.source, x.chosen?.period], [9.99, 'selector', 'month']);
    const once = (await extract({ url: t.site.pageUrl('jsonld-basic.html') })).json<ExtractResult>();
    assert.equal(once.chosen?.period, null);
    assert.ok(once.candidates.every((c) => c.period === null));
  });

  it("a page without a price: 200, ok false, the extractor's reason, every candidate still listed", T, async () => {
    const x = (await extract({ url: t.site.pageUrl('jsonld-zero-placeholder.html') })).json<ExtractResult>();
    assert.equal(x.ok, false);
    assert.equal(x.error_code, 'no_price');
    assert.ok(x.failure && x.error === x.failure);
    assert.equal(x.price, null);
    assert.equal(x.chosen, null);
  });

  it('fetch failures are results too: HTTP errors, robots.txt, redirect loops, non-HTML', T, async () => {
    for (const [path, code, body] of [
      ['/status/500', 'http_error', {}],
      ['/private/jsonld-basic.html', 'robots_disallowed', {}],
      ['/redirect/loop/a', 'too_many_redirects', {}],
      ['/files/document.pdf', 'unsupported_content', {}],
    ] as const) {
      const res = await extract({ url: t.site.url + path, ...body });
      assert.equal(res.statusCode, 200, res.body);
      const x = res.json<ExtractResult>();
      assert.equal(x.ok, false);
      assert.equal(x.error_code, code, `${path}: ${x.error}`);
    }
    // respect_robots false reads the disallowed page.
    const res = await extract({ url: `${t.site.url}/private/jsonld-basic.html`, respect_robots: false });
    assert.equal(res.json<ExtractResult>().price, 19.99);
  });

  it('render_js without a browser says so', T, async () => {
    const res = await extract({ url: t.site.pageUrl('jsonld-basic.html'), render_js: true });
    assert.equal(res.statusCode, 200, res.body);
    const x = res.json<ExtractResult>();
    // Either a browser rendered it, or the result says none is available; never a wrong price.
    if (x.ok) assert.equal(x.price, 19.99);
    else assert.equal(x.error_code, 'browser_unavailable');
  });

  it('422 for bad input, naming the field', T, async () => {
    const seen = t.site.requests.length;
    for (const [payload, field] of [
      [{}, 'url'],
      [{ url: 'ftp://127.0.0.1/price.html' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), currency_override: 'XXQ' }, 'currency_override'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), selector: '' }, 'selector'],
      // Selectors are compiled as listings compile them (selectorProblem, src/extraction/selector.ts):
      // one the extraction could not run is refused, not turned into a silent "no price" or a 500.
      [{ url: t.site.pageUrl('jsonld-basic.html'), selector: '.price,' }, 'selector'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), selector: 'span::before' }, 'selector'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), selector: 'span:no-such-pseudo' }, 'selector'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), selector: '<span class="price">$1.00</span>' }, 'selector'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), respect_robots: 'no' }, 'respect_robots'],
      [{ url: t.site.pageUrl('jsonld-basic.html'), extra: 1 }, 'extra'],
    ] as const) {
      const res = await extract(payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      const body = res.json<{ code: string; details: { field: string }[] }>();
      assert.equal(body.code, 'validation_failed');
      assert.ok(
        body.details.some((d) => d.field === field),
        `${JSON.stringify(payload)}: ${res.body}`,
      );
    }
    assert.equal(t.site.requests.length, seen, 'bad input is refused before anything is fetched');
  });

  it('401 without a key', T, async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: t.site.pageUrl('jsonld-basic.html') },
    });
    assert.equal(res.statusCode, 401);
  });
});

describe('POST /extract with loopback targets not allowed (the default)', () => {
  const strict = useTestApp({ ...MONITORING_ENV, ALLOW_LOOPBACK_TARGETS: 'false' });

  it('422 for private, loopback, link-local and metadata addresses, without sending anything there', T, async () => {
    const k = await strict.newKey('business');
    const hitsBefore = t.site.requests.length;
    for (const url of [
      t.site.pageUrl('jsonld-basic.html'),
      'http://10.0.0.1/p',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:9/p',
      'http://localhost:9/p',
    ]) {
      const res = await strict.app.inject({
        method: 'POST',
        url: '/api/v1/extract',
        headers: k.headers,
        payload: { url },
      });
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      const body = res.json<{ details: { field: string; message: string }[] }>();
      assert.equal(body.details[0]?.field, 'url');
    }
    assert.equal(t.site.requests.length, hitsBefore, 'the fixture site saw nothing');
  });
});
