import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson, rowsOf, setListingState } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { LISTINGS_DUE_CHANNEL } from '../../src/checks/listing-leases.js';
import { createProduct, expectError, fieldsOf, type Headers, PREFIXES } from '../products/support.js';
import type { Listing } from '../helpers/api-types.js';

async function setup(t: TestApp, headers: Headers) {
  const product = await createProduct(t, headers, { url: 'https://our.example/kettle', currency: 'EUR' });
  const competitor = await createCompetitor(t, headers, { website: 'https://www.rival.example' });
  return { product, competitor };
}

const nextCheck = async (t: TestApp, id: string) =>
  (
    await t.rt.db.query<{ next_check_at: Date }>('select next_check_at from listings where id = $1', [id])
  ).rows[0]!.next_check_at.getTime();

describe('listings: create, read, update, delete', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`walks the whole lifecycle of a competitor's listing under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const { product, competitor } = await setup(t, headers);
      const before = Date.now();
      const res = await t.app.inject({
        method: 'POST',
        url: `${prefix}/listings`,
        headers,
        payload: {
          product_id: product.id,
          competitor_id: competitor.id,
          url: 'https://shop.rival.example/kettle?ref=1',
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      const l = res.json<Listing>();
      assert.match(l.id, /^lst_[0-9a-z]+$/);
      assert.equal(res.headers.location, `${prefix}/listings/${l.id}`);
      assert.deepEqual(
        { ...l, id: undefined, created_at: undefined, updated_at: undefined, next_check_at: undefined },
        {
          id: undefined,
          object: 'listing',
          product_id: product.id,
          competitor_id: competitor.id,
          url: 'https://shop.rival.example/kettle?ref=1',
          selector: null,
          currency_override: null,
          check_interval_seconds: 21_600,
          enabled: true,
          respect_robots: true,
          render_js: false,
          visible_fallback: true,
          hold_factor: null,
          status: 'pending',
          last_checked_at: null,
          last_success_at: null,
          last_price: null,
          last_currency: null,
          in_stock: null,
          last_error: null,
          consecutive_failures: 0,
          next_check_at: undefined,
          held: null,
          warnings: [],
          created_at: undefined,
          updated_at: undefined,
        },
      );
      // Due at once: the first check comes as soon as a worker is free.
      assert.ok(Date.parse(l.next_check_at!) >= before - 1000 && Date.parse(l.next_check_at!) <= Date.now() + 1000);
      assert.deepEqual(await getJson(t, headers, String(res.headers.location)), l);

      const put = await t.app.inject({
        method: 'PUT',
        url: `${prefix}/listings/${l.id}`,
        headers,
        payload: { selector: '.price', currency_override: 'chf' },
      });
      assert.equal(put.statusCode, 200, put.body);
      const u = put.json<Listing>();
      assert.equal(u.selector, '.price');
      assert.equal(u.currency_override, 'CHF');
      assert.ok(Date.parse(u.updated_at) > Date.parse(l.updated_at));

      const del = await t.app.inject({ method: 'DELETE', url: `${prefix}/listings/${l.id}`, headers });
      assert.equal(del.statusCode, 204);
      expectError(await t.app.inject({ method: 'GET', url: `${prefix}/listings/${l.id}`, headers }), 404, 'not_found');
      expectError(
        await t.app.inject({ method: 'DELETE', url: `${prefix}/listings/${l.id}`, headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({
          method: 'PATCH',
          url: `${prefix}/listings/${l.id}`,
          headers,
          payload: { enabled: false },
        }),
        404,
        'not_found',
      );
    });
  }

  it("monitors our own page at the product's url by default, or at another own url", async () => {
    const { headers, accountId } = await t.newKey();
    const { product } = await setup(t, headers);
    const own = await createListing(t, headers, { product_id: product.id });
    assert.equal(own.competitor_id, null);
    assert.equal(own.url, 'https://our.example/kettle');
    const explicitNull = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: null,
      url: 'https://our.example/kettle-2',
    });
    assert.equal(explicitNull.competitor_id, null);
    // A product without a url needs one in the listing.
    const bare = await createProduct(t, headers, { name: 'no url' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers,
      payload: { product_id: bare.id },
    });
    const body = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(body), ['url']);
    assert.match(body.details![0]!.message, /product has no url/);
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 2);
    // The listing keeps the URL it was created with when the product's url changes later.
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${product.id}`,
      headers,
      payload: { url: 'https://our.example/new' },
    });
    assert.equal((await getJson<Listing>(t, headers, `/api/v1/listings/${own.id}`)).url, 'https://our.example/kettle');
  });

  it("needs a url for a competitor's page", async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers,
      payload: { product_id: product.id, competitor_id: competitor.id },
    });
    const body = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(body), ['url']);
    assert.match(body.details![0]!.message, /competitor/);
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
  });

  it('takes every setting on create and returns it', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const settings = {
      selector: 'div.product > span[itemprop="price"]:not(.old)',
      currency_override: 'gbp',
      check_interval_seconds: 300,
      enabled: false,
      respect_robots: false,
      render_js: true,
      visible_fallback: false,
      hold_factor: 10,
    };
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
      ...settings,
    });
    assert.deepEqual(
      {
        selector: l.selector,
        currency_override: l.currency_override,
        check_interval_seconds: l.check_interval_seconds,
        enabled: l.enabled,
        respect_robots: l.respect_robots,
        render_js: l.render_js,
        visible_fallback: l.visible_fallback,
        hold_factor: l.hold_factor,
      },
      { ...settings, currency_override: 'GBP' },
    );
    assert.equal(l.next_check_at, null, 'a disabled listing is not scheduled');
  });

  it("warns, without refusing, when the URL is outside the competitor's domain", async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    for (const url of [
      'https://rival.example/a',
      'https://www.rival.example/b',
      'https://shop.rival.example/c',
      'https://RIVAL.example:8443/d',
    ]) {
      const l = await createListing(t, headers, { product_id: product.id, competitor_id: competitor.id, url });
      assert.deepEqual(l.warnings, [], url);
    }
    const off = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://marketplace.example/rival/kettle',
    });
    assert.equal(off.warnings.length, 1);
    assert.equal(off.warnings[0]!.code, 'domain_mismatch');
    assert.match(off.warnings[0]!.message, /marketplace\.example.*rival\.example/);
    // The warning is worked out from the current state: it shows on every read and goes when fixed.
    assert.deepEqual((await getJson<Listing>(t, headers, `/api/v1/listings/${off.id}`)).warnings, off.warnings);
    const fixed = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${off.id}`,
      headers,
      payload: { url: 'https://rival.example/kettle' },
    });
    assert.deepEqual(fixed.json<Listing>().warnings, []);
    // ... also when the competitor's website moves.
    await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/competitors/${competitor.id}`,
      headers,
      payload: { website: 'https://rival-new.example' },
    });
    assert.equal(
      (await getJson<Listing>(t, headers, `/api/v1/listings/${off.id}`)).warnings[0]?.code,
      'domain_mismatch',
    );
    // Our own pages have no competitor to compare with.
    assert.deepEqual(
      (await createListing(t, headers, { product_id: product.id, url: 'https://anywhere.example/x' })).warnings,
      [],
    );
  });

  it('refuses a second listing of the same URL for a product with 409 naming the first', async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const first = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    const dup = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers,
      payload: { product_id: product.id, url: 'https://rival.example/k' },
    });
    const body = expectError(dup, 409, 'conflict');
    assert.deepEqual(fieldsOf(body), ['url']);
    assert.match(body.details![0]!.message, new RegExp(first.id));
    // Our own page at the product's url, twice.
    await createListing(t, headers, { product_id: product.id });
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/listings', headers, payload: { product_id: product.id } }),
      409,
      'conflict',
    );
    // An update onto a taken URL, too; nothing changes.
    const second = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k2',
    });
    const before = await rowsOf(t, 'listings', accountId);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${second.id}`,
      headers,
      payload: { url: 'https://rival.example/k', selector: '.p' },
    });
    assert.match(expectError(upd, 409, 'conflict').details![0]!.message, new RegExp(first.id));
    assert.deepEqual(await rowsOf(t, 'listings', accountId), before);
    // The same URL for another product is fine; URLs compare exactly.
    const other = await createProduct(t, headers);
    await createListing(t, headers, {
      product_id: other.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k/',
    });
  });

  it('lets exactly one of several concurrent creates take a URL', async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/listings',
          headers,
          payload: { product_id: product.id, competitor_id: competitor.id, url: 'https://rival.example/race' },
        }),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409]);
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 1);
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    it(`${method} changes only the fields sent; null clears selector and currency_override`, async () => {
      const { headers } = await t.newKey();
      const { product, competitor } = await setup(t, headers);
      const l = await createListing(t, headers, {
        product_id: product.id,
        competitor_id: competitor.id,
        url: 'https://rival.example/k',
        selector: '.p',
        currency_override: 'EUR',
      });
      const res = await t.app.inject({
        method,
        url: `/api/v1/listings/${l.id}`,
        headers,
        payload: { selector: null, currency_override: null },
      });
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json<Listing>();
      assert.deepEqual(
        { ...u, updated_at: undefined, next_check_at: undefined },
        { ...l, selector: null, currency_override: null, updated_at: undefined, next_check_at: undefined },
      );
      const empty = await t.app.inject({ method, url: `/api/v1/listings/${l.id}`, headers, payload: {} });
      assert.deepEqual(empty.json(), u);
      const nulls = await t.app.inject({
        method,
        url: `/api/v1/listings/${l.id}`,
        headers,
        payload: { url: null, check_interval_seconds: null, enabled: null },
      });
      assert.deepEqual(fieldsOf(expectError(nulls, 422, 'validation_failed')), [
        'check_interval_seconds',
        'enabled',
        'url',
      ]);
    });
  }

  it('refuses to move a listing to another product or competitor', async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    const before = await rowsOf(t, 'listings', accountId);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { product_id: product.id, competitor_id: null, enabled: false },
    });
    const body = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(body), ['competitor_id', 'product_id']);
    assert.match(body.details![0]!.message, /cannot be changed/);
    assert.deepEqual(await rowsOf(t, 'listings', accountId), before);
  });

  it('makes the listing due now when what a check does changes, and only then', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
      selector: '.a',
    });
    const later = new Date(Date.now() + 86_400_000);
    const changes: Record<string, unknown>[] = [
      { url: 'https://rival.example/k2' },
      { selector: '.b' },
      { selector: null },
      { currency_override: 'USD' },
      { check_interval_seconds: 3600 },
      { respect_robots: false },
      { render_js: true },
    ];
    for (const change of changes) {
      await t.rt.db.query('update listings set next_check_at = $2 where id = $1', [l.id, later]);
      const before = Date.now();
      const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l.id}`, headers, payload: change });
      assert.equal(res.statusCode, 200, res.body);
      const due = Date.parse(res.json<Listing>().next_check_at!);
      assert.ok(due <= Date.now() + 1000 && due >= before - 1000, `${JSON.stringify(change)} makes it due now`);
      // Sending the same value again is no change: the schedule stays.
      await t.rt.db.query('update listings set next_check_at = $2 where id = $1', [l.id, later]);
      await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l.id}`, headers, payload: change });
      assert.equal(
        await nextCheck(t, l.id),
        later.getTime(),
        `${JSON.stringify(change)} sent again keeps the schedule`,
      );
    }
    // Disabling keeps the schedule (hidden while disabled); enabling makes it due now.
    await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l.id}`, headers, payload: { enabled: false } });
    assert.equal(await nextCheck(t, l.id), later.getTime());
    const off = await getJson<Listing>(t, headers, `/api/v1/listings/${l.id}`);
    assert.equal(off.next_check_at, null);
    const on = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { enabled: true },
    });
    assert.ok(Date.parse(on.json<Listing>().next_check_at!) <= Date.now() + 1000);
  });

  it('wakes the workers when a listing becomes due: created, rescheduled or enabled', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    let count = 0;
    let wake: (() => void) | undefined;
    const stop = await t.rt.db.listen(LISTINGS_DUE_CHANNEL, () => {
      count++;
      wake?.();
    });
    const notified = async (action: () => Promise<unknown>) => {
      const got = new Promise<void>((resolve) => (wake = resolve));
      await action();
      await got;
    };
    try {
      let l: Listing | undefined;
      await notified(async () => {
        l = await createListing(t, headers, {
          product_id: product.id,
          competitor_id: competitor.id,
          url: 'https://rival.example/n',
        });
      });
      await notified(() =>
        t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l!.id}`, headers, payload: { selector: '.p' } }),
      );
      await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l!.id}`, headers, payload: { enabled: false } });
      await notified(() =>
        t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${l!.id}`, headers, payload: { enabled: true } }),
      );
      // Disabling, and a disabled listing created, wake nobody: the last notification was the enable above.
      const before = count;
      await createListing(t, headers, {
        product_id: product.id,
        competitor_id: competitor.id,
        url: 'https://rival.example/off',
        enabled: false,
      });
      await notified(() => createListing(t, headers, { product_id: product.id, url: 'https://our.example/marker' }));
      assert.equal(count, before + 1, 'only the enabled listing notified');
    } finally {
      await stop();
    }
  });

  it('shows the state a check left, and keeps it across settings changes', async () => {
    const { headers } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    const at = new Date('2026-03-01T10:00:00.123Z');
    await setListingState(t, l.id, { price: 1299.5, currency: 'EUR', in_stock: true, checked_at: at });
    const ok = await getJson<Listing>(t, headers, `/api/v1/listings/${l.id}`);
    assert.deepEqual(
      [
        ok.status,
        ok.last_price,
        ok.last_currency,
        ok.in_stock,
        ok.last_checked_at,
        ok.last_success_at,
        ok.last_error,
        ok.consecutive_failures,
      ],
      ['ok', 1299.5, 'EUR', true, at.toISOString(), at.toISOString(), null, 0],
    );
    await t.rt.db.query(
      `update listings set status = 'flagged', last_error = 'the page answered 404', consecutive_failures = 5, last_checked_at = $2 where id = $1`,
      [l.id, new Date('2026-03-02T00:00:00Z')],
    );
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { selector: '.price' },
    });
    const flagged = res.json<Listing>();
    assert.deepEqual(
      [flagged.status, flagged.last_error, flagged.consecutive_failures, flagged.last_price, flagged.last_success_at],
      ['flagged', 'the page answered 404', 5, 1299.5, at.toISOString()],
    );
  });

  it('keeps observed prices in the history when a listing is deleted, and drops its check log', async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    await t.rt.db.query(
      `insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, observed_at, source)
       values ($1, $2, $3, $4, 9.99, 'EUR', now(), 'scrape')`,
      [accountId, product.id, competitor.id, l.id],
    );
    await t.rt.db.query(
      `insert into listing_checks (listing_id, started_at, duration_ms, ok) values ($1, now(), 5, true)`,
      [l.id],
    );
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/listings/${l.id}`, headers })).statusCode, 204);
    const obs = (await rowsOf(t, 'price_observations', accountId)) as { listing_id: string | null; price: string }[];
    assert.equal(obs.length, 1);
    assert.equal(obs[0]!.listing_id, null);
    assert.equal((await t.rt.db.query('select 1 from listing_checks where listing_id = $1', [l.id])).rows.length, 0);
  });

  it('goes with its product', async () => {
    const { headers, accountId } = await t.newKey();
    const { product, competitor } = await setup(t, headers);
    const l = await createListing(t, headers, {
      product_id: product.id,
      competitor_id: competitor.id,
      url: 'https://rival.example/k',
    });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${product.id}`, headers });
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/listings/${l.id}`, headers }), 404, 'not_found');
    assert.equal((await rowsOf(t, 'listings', accountId)).length, 0);
    assert.equal(
      (await getJson<{ listing_count: number }>(t, headers, `/api/v1/competitors/${competitor.id}`)).listing_count,
      0,
    );
  });
});
