import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, rowsOf } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, type Headers } from '../products/support.js';

describe('listings: bad input', () => {
  const t = useTestApp();
  const post = (headers: Headers, payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v1/listings', headers, payload: payload as string });

  async function setup(tt: TestApp) {
    const key = await tt.newKey();
    const product = await createProduct(tt, key.headers, { url: 'https://our.example/p' });
    const competitor = await createCompetitor(tt, key.headers);
    return { ...key, valid: { product_id: product.id, competitor_id: competitor.id, url: 'https://rival.example/p' } };
  }

  it('refuses malformed JSON with 400, non-objects and missing product_id with 422', async () => {
    const { headers, accountId } = await setup(t);
    for (const text of ['{"product_id":', '{product_id: 1}', '{"a":1,}'])
      expectError(await post(headers, text), 400, 'invalid_json');
    for (const text of ['[]', '"x"', '1', 'null', '']) expectError(await post(headers, text), 422, 'validation_failed');
    const missing = expectError(await post(headers, {}), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(missing), ['product_id']);
    expectError(await post({ ...headers, 'content-type': 'text/plain' }, 'x'), 415, 'unsupported_media_type');
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
  });

  it('names every field of the wrong type or shape', async () => {
    const { headers, accountId } = await setup(t);
    const res = await post(headers, {
      product_id: 'comp_123',
      competitor_id: 42,
      url: 'ftp://rival.example/p',
      selector: '',
      currency_override: 'XYZ',
      check_interval_seconds: '3600',
      enabled: 'yes',
      respect_robots: 1,
      render_js: null,
    });
    assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), [
      'check_interval_seconds',
      'competitor_id',
      'currency_override',
      'enabled',
      'product_id',
      'render_js',
      'respect_robots',
      'selector',
      'url',
    ]);
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
  });

  it('refuses unknown and read-only fields by name', async () => {
    const { headers, valid, accountId } = await setup(t);
    const res = await post(headers, {
      ...valid,
      status: 'ok',
      last_price: 1,
      next_check_at: '2030-01-01T00:00:00Z',
      interval: 600,
    });
    assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), [
      'interval',
      'last_price',
      'next_check_at',
      'status',
    ]);
    const l = await createListing(t, headers, valid);
    const before = await rowsOf(t, 'listings', accountId);
    const upd = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { status: 'ok', selector: '.x' },
    });
    assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['status']);
    assert.deepEqual(await rowsOf(t, 'listings', accountId), before);
  });

  it('takes check intervals from 300 s to 30 days, 6 hours by default', async () => {
    const { headers, valid } = await setup(t);
    let n = 0;
    for (const seconds of [300, 3600, 2_592_000]) {
      const l = await createListing(t, headers, {
        ...valid,
        url: `${valid.url}/${n++}`,
        check_interval_seconds: seconds,
      });
      assert.equal(l.check_interval_seconds, seconds);
    }
    assert.equal(
      (await createListing(t, headers, { ...valid, url: `${valid.url}/default` })).check_interval_seconds,
      21_600,
    );
    for (const seconds of [299, 0, -1, 2_592_001, 300.5, 1e10, '600', true]) {
      const res = await post(headers, { ...valid, url: `${valid.url}/bad`, check_interval_seconds: seconds });
      const body = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['check_interval_seconds'], String(seconds));
    }
  });

  it('accepts CSS selectors the extraction can run and explains the ones it cannot', async () => {
    const { headers, valid, accountId } = await setup(t);
    const good = [
      '.price',
      '#main .product-price > span.amount',
      'span[itemprop="price"]',
      'meta[property="product:price:amount"]',
      '.price:not(.price--old)',
      'div:has(> .sale) .price',
      'li:nth-child(2n+1) b',
      '.a, .b',
      ':contains("EUR")',
      `${':not('.repeat(150)}a${')'.repeat(150)}`, // deep nesting within the length limit
    ];
    let n = 0;
    for (const selector of good) {
      const l = await createListing(t, headers, { ...valid, url: `${valid.url}/${n++}`, selector });
      assert.equal(l.selector, selector);
    }
    const before = (await rowsOf(t, 'listings', accountId)).length;
    const bad: [string, RegExp][] = [
      ['.price::before', /not a valid CSS selector.*pseudo-element/i],
      [':unknown-thing', /not a valid CSS selector.*:unknown-thing/i],
      ['.a,', /not a valid CSS selector/],
      ['#', /not a valid CSS selector/],
      ['<span class="price">19.99</span>', /not HTML/],
      ['div[data-x="<b>"]', /not HTML/],
      ['a[href', /not a valid CSS selector/],
      ['   ', /blank/],
      ['a\u0000', /NUL/],
    ];
    for (const [selector, message] of bad) {
      const body = expectError(
        await post(headers, { ...valid, url: `${valid.url}/bad`, selector }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), ['selector'], selector);
      assert.match(body.details![0]!.message, message, selector);
    }
    const long = expectError(await post(headers, { ...valid, selector: '.a'.repeat(501) }), 422, 'validation_failed');
    assert.match(long.details![0]!.message, /1000/);
    // The same checks on update, which then changes nothing.
    const l = await createListing(t, headers, { ...valid, url: `${valid.url}/upd` });
    const snapshot = await rowsOf(t, 'listings', accountId);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { selector: 'p::after', enabled: false },
    });
    assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['selector']);
    assert.deepEqual(await rowsOf(t, 'listings', accountId), snapshot);
    assert.equal(snapshot.length, before + 1);
  });

  it('upper-cases currency_override and refuses unknown codes', async () => {
    const { headers, valid } = await setup(t);
    assert.equal((await createListing(t, headers, { ...valid, currency_override: 'jpy' })).currency_override, 'JPY');
    for (const code of ['ABC', 'EURO', '€', '', 'us']) {
      assert.deepEqual(
        fieldsOf(
          expectError(
            await post(headers, { ...valid, url: `${valid.url}/x`, currency_override: code }),
            422,
            'validation_failed',
          ),
        ),
        ['currency_override'],
      );
    }
  });

  it('refuses NUL characters and oversized values, never 500', async () => {
    const { headers, valid, accountId } = await setup(t);
    for (const [field, value] of [
      ['url', 'https://rival.example/\u0000'],
      ['selector', '.a\u0000'],
      ['product_id', 'prod_\u0000'],
      ['competitor_id', 'comp_a\u0000'],
    ] as const) {
      assert.deepEqual(
        fieldsOf(expectError(await post(headers, { ...valid, [field]: value }), 422, 'validation_failed')),
        [field],
      );
    }
    assert.deepEqual(
      fieldsOf(
        expectError(
          await post(headers, { ...valid, url: `https://rival.example/${'x'.repeat(2048)}` }),
          422,
          'validation_failed',
        ),
      ),
      ['url'],
    );
    assert.deepEqual(
      fieldsOf(
        expectError(await post(headers, { ...valid, product_id: `prod_${'a'.repeat(100)}` }), 422, 'validation_failed'),
      ),
      ['product_id'],
    );
    expectError(await post(headers, { ...valid, selector: 'x'.repeat(1_100_000) }), 413, 'payload_too_large');
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
  });

  it('refuses a URL without a host, which the URL parser would read as host "p" (and the check would look up)', async () => {
    const { headers, valid, accountId } = await setup(t);
    for (const url of ['http:///p', 'https:////p', 'http://?p', 'http://#p']) {
      const e = expectError(await post(headers, { ...valid, url }), 422, 'validation_failed');
      assert.deepEqual(e.details, [{ field: 'url', message: 'must be an http or https URL naming a host' }], url);
    }
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
  });
});
