import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import type { CheckResult, ExtractResult } from '../../src/checks/schemas.js';
import { NO_CHROMIUM_MESSAGE } from '../../src/fetcher/browser/index.js';
import { useTestApp } from '../helpers/app.js';
import { MONITORING_ENV, useMonitoringTest } from '../jobs/support.js';

/**
 * The browser is optional (issue 3, point 6): without one the service works, render_js checks
 * fail saying why, and /readyz reports it without becoming unready.
 */

const T = { timeout: 30_000 };
const MISSING = '/nonexistent/pricehound-test/chromium';

describe('without a browser', () => {
  const t = useMonitoringTest({ CHROMIUM_PATH: MISSING });

  it('/readyz is 200 and says the browser is not available, and why', T, async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ status: string; browser: { available: boolean; reason?: string } }>();
    assert.equal(body.status, 'ok');
    assert.equal(body.browser.available, false);
    assert.ok(body.browser.reason?.startsWith(NO_CHROMIUM_MESSAGE), body.browser.reason);
    assert.match(body.browser.reason ?? '', /CHROMIUM_PATH=.* is not an executable file/);
  });

  it('a render_js dry run fails with browser_unavailable and the reason; a plain one works', T, async () => {
    const url = t.site.pageUrl('jsonld-basic.html');
    const js = await t.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: t.account.headers,
      payload: { url, render_js: true },
    });
    assert.equal(js.statusCode, 200, js.body);
    const x = js.json<ExtractResult>();
    assert.deepEqual([x.ok, x.error_code, x.price], [false, 'browser_unavailable', null]);
    assert.ok(x.error?.includes(NO_CHROMIUM_MESSAGE), x.error ?? '');

    const plain = await t.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: t.account.headers,
      payload: { url },
    });
    assert.equal(plain.json<ExtractResult>().price, 19.99);
  });

  it("a render_js listing's check is recorded as failed with browser_unavailable", T, async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers: t.account.headers,
      payload: { product_id: t.account.productId, url: t.site.pageUrl('jsonld-basic.html'), render_js: true },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json<{ id: string }>().id;
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/listings/${id}/check`, headers: t.account.headers });
    assert.equal(res.statusCode, 200, res.body);
    const check = res.json<CheckResult>();
    assert.deepEqual([check.ok, check.error_code], [false, 'browser_unavailable']);
    const listing = await t.app.inject({ method: 'GET', url: `/api/v1/listings/${id}`, headers: t.account.headers });
    assert.equal(listing.json<{ status: string }>().status, 'failing');
    assert.ok(listing.json<{ last_error: string }>().last_error.includes(NO_CHROMIUM_MESSAGE));
  });
});

describe('with the system Chromium', () => {
  const chromium = '/usr/bin/chromium';
  const present = fs.existsSync(chromium);
  const t = useTestApp({ ...MONITORING_ENV, CHROMIUM_PATH: chromium });

  it(
    '/readyz says the browser is available, without starting it',
    { ...T, skip: present ? false : `${chromium} is not installed` },
    async () => {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json<{ browser: unknown }>().browser, { available: true });
    },
  );
});
