import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, PREFIXES } from '../products/support.js';
import { createCompetitor, createListing, getJson, rowsOf } from './support.js';
import type { Competitor } from '../helpers/api-types.js';

describe('competitors: create, read, update, delete', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`walks the whole lifecycle under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const body = { name: 'Rival GmbH', website: 'https://www.Rival.example/shop', notes: 'cheap on cables' };
      const created = await t.app.inject({ method: 'POST', url: `${prefix}/competitors`, headers, payload: body });
      assert.equal(created.statusCode, 201, created.body);
      const c = created.json<Competitor>();
      assert.match(c.id, /^comp_[0-9a-z]+$/);
      assert.equal(created.headers.location, `${prefix}/competitors/${c.id}`);
      assert.deepEqual(
        { ...c, id: undefined, created_at: undefined, updated_at: undefined },
        {
          ...body,
          id: undefined,
          object: 'competitor',
          domain: 'rival.example',
          proxy_url: null,
          listing_count: 0,
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.match(c.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(c.updated_at, c.created_at);

      assert.deepEqual(await getJson(t, headers, String(created.headers.location)), c);

      const put = await t.app.inject({
        method: 'PUT',
        url: `${prefix}/competitors/${c.id}`,
        headers,
        payload: { name: 'Rival AG' },
      });
      assert.equal(put.statusCode, 200, put.body);
      const u = put.json<Competitor>();
      assert.deepEqual({ ...u, updated_at: undefined }, { ...c, name: 'Rival AG', updated_at: undefined });
      assert.ok(Date.parse(u.updated_at) > Date.parse(c.updated_at));

      const del = await t.app.inject({ method: 'DELETE', url: `${prefix}/competitors/${c.id}`, headers });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      expectError(
        await t.app.inject({ method: 'GET', url: `${prefix}/competitors/${c.id}`, headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({ method: 'DELETE', url: `${prefix}/competitors/${c.id}`, headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({ method: 'PATCH', url: `${prefix}/competitors/${c.id}`, headers, payload: { name: 'x' } }),
        404,
        'not_found',
      );
    });
  }

  it('derives the domain from the website: lower case, no www., no port, IDN in ASCII form', async () => {
    const { headers } = await t.newKey();
    const cases: [string, string][] = [
      ['https://www.Example.COM:8443/de/', 'example.com'],
      ['http://shop.example.co.uk', 'shop.example.co.uk'],
      ['https://WWW.xn--bcher-kva.de', 'xn--bcher-kva.de'], // IDN websites are sent in ASCII form (format uri)
      ['https://www2.example.com', 'www2.example.com'],
      ['http://127.0.0.1:8080/x', '127.0.0.1'],
      ['https://example.com./', 'example.com'],
    ];
    for (const [website, domain] of cases) {
      const c = await createCompetitor(t, headers, { website });
      assert.equal(c.domain, domain, website);
      assert.equal(c.website, website, 'the website is stored as sent');
    }
    // A new website gives a new domain.
    const c = await createCompetitor(t, headers);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/competitors/${c.id}`,
      headers,
      payload: { website: 'https://www.other.example' },
    });
    assert.equal(res.json<Competitor>().domain, 'other.example');
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    it(`${method} changes only the supplied fields, null clears optional ones, {} changes nothing`, async () => {
      const { headers } = await t.newKey();
      const c = await createCompetitor(t, headers, { notes: 'n', proxy_url: 'http://proxy.example:3128' });
      const r1 = await t.app.inject({
        method,
        url: `/api/v1/competitors/${c.id}`,
        headers,
        payload: { notes: null, proxy_url: null },
      });
      assert.equal(r1.statusCode, 200, r1.body);
      const u = r1.json<Competitor>();
      assert.deepEqual([u.notes, u.proxy_url, u.name, u.website], [null, null, c.name, c.website]);
      const r2 = await t.app.inject({ method, url: `/api/v1/competitors/${c.id}`, headers, payload: {} });
      assert.deepEqual(r2.json(), u);
      const r3 = await t.app.inject({
        method,
        url: `/api/v1/competitors/${c.id}`,
        headers,
        payload: { name: null, website: null },
      });
      assert.deepEqual(fieldsOf(expectError(r3, 422, 'validation_failed')), ['name', 'website']);
      assert.deepEqual(await getJson(t, headers, `/api/v1/competitors/${c.id}`), u);
    });
  }

  it('never shows proxy credentials, and keeps them when the masked URL is sent back', async () => {
    const { headers, accountId } = await t.newKey();
    const secret = 'http://alice:s3cr%40t@proxy.example:8080';
    const c = await createCompetitor(t, headers, { proxy_url: secret });
    assert.equal(c.proxy_url, 'http://****:****@proxy.example:8080');
    const stored = async () =>
      (await t.rt.db.query<{ proxy_url: string }>('select proxy_url from competitors where id = $1', [c.id])).rows[0]!
        .proxy_url;
    assert.equal(await stored(), secret, 'stored in full: checks need it');
    for (const url of [`/api/v1/competitors/${c.id}`, '/api/v1/competitors', '/v1/competitors?q=Rival']) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      assert.doesNotMatch(res.body, /alice|s3cr/, url);
    }
    // A client sending back what it read (a whole-object PUT) keeps the proxy as it was.
    const { id: _id, object: _o, domain: _d, listing_count: _l, created_at: _c, updated_at: _u, ...writable } = c;
    const back = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/competitors/${c.id}`,
      headers,
      payload: { ...writable, name: 'Renamed' },
    });
    assert.equal(back.statusCode, 200, back.body);
    assert.equal(back.json<Competitor>().proxy_url, c.proxy_url);
    assert.equal(await stored(), secret);
    // Masked credentials of another host are not "the same URL": refused, not stored.
    const other = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/competitors/${c.id}`,
      headers,
      payload: { proxy_url: 'http://****:****@elsewhere.example:8080' },
    });
    assert.deepEqual(fieldsOf(expectError(other, 422, 'validation_failed')), ['proxy_url']);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/competitors',
      headers,
      payload: { name: 'x', website: 'https://x.example', proxy_url: c.proxy_url },
    });
    assert.deepEqual(fieldsOf(expectError(created, 422, 'validation_failed')), ['proxy_url']);
    assert.equal(await stored(), secret);
    assert.equal((await rowsOf(t, 'competitors', accountId)).length, 1);
    // New credentials replace the old ones; a user name alone (an API key) is masked too.
    const token = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/competitors/${c.id}`,
      headers,
      payload: { proxy_url: 'https://APIKEY123@proxy.example' },
    });
    assert.equal(token.json<Competitor>().proxy_url, 'https://****@proxy.example');
    assert.doesNotMatch(token.body, /APIKEY/);
    assert.equal(await stored(), 'https://APIKEY123@proxy.example');
    // Without credentials the URL is shown as stored.
    const plain = await createCompetitor(t, headers, { proxy_url: 'http://proxy.example:3128' });
    assert.equal(plain.proxy_url, 'http://proxy.example:3128');
  });

  it('counts listings and deletes them, their check log and observed prices with the competitor', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { url: 'https://our.example/p' });
    const c = await createCompetitor(t, headers);
    const keep = await createCompetitor(t, headers, { name: 'Other', website: 'https://other.example' });
    const l1 = await createListing(t, headers, {
      product_id: p.id,
      competitor_id: c.id,
      url: 'https://rival.example/p1',
    });
    await createListing(t, headers, { product_id: p.id, competitor_id: c.id, url: 'https://rival.example/p2' });
    const kept = await createListing(t, headers, {
      product_id: p.id,
      competitor_id: keep.id,
      url: 'https://other.example/p',
    });
    const own = await createListing(t, headers, { product_id: p.id });
    assert.equal((await getJson<Competitor>(t, headers, `/api/v1/competitors/${c.id}`)).listing_count, 2);
    assert.equal((await getJson<Competitor>(t, headers, `/api/v1/competitors/${keep.id}`)).listing_count, 1);
    await t.rt.db.query(
      `insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, observed_at, source)
       values ($1, $2, $3, $4, 9.5, 'USD', now(), 'scrape'), ($1, $2, $5, $6, 8, 'USD', now(), 'scrape')`,
      [accountId, p.id, c.id, l1.id, keep.id, kept.id],
    );
    await t.rt.db.query(
      `insert into listing_checks (listing_id, started_at, duration_ms, ok) values ($1, now(), 5, true)`,
      [l1.id],
    );

    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${c.id}`, headers });
    assert.equal(del.statusCode, 204);
    const listings = (await rowsOf(t, 'listings', accountId)) as { id: string }[];
    assert.deepEqual(listings.map((l) => l.id).sort(), [kept.id, own.id].sort());
    const obs = (await rowsOf(t, 'price_observations', accountId)) as { competitor_id: string }[];
    assert.deepEqual(
      obs.map((o) => o.competitor_id),
      [keep.id],
    );
    const checks = await t.rt.db.query('select 1 from listing_checks where listing_id = $1', [l1.id]);
    assert.equal(checks.rows.length, 0);
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/listings/${l1.id}`, headers }), 404, 'not_found');
    // The product stays, with its remaining listings.
    const prod = await getJson<{ monitoring: { listing_count: number } }>(t, headers, `/api/v1/products/${p.id}`);
    assert.equal(prod.monitoring.listing_count, 2);
  });

  it('answers 404 for ids that cannot exist, never 500', async () => {
    const { headers } = await t.newKey();
    for (const id of [
      'comp_doesnotexist',
      'prod_abc',
      'nope',
      'x'.repeat(64),
      'comp_%00',
      "comp_'%3B drop table competitors",
    ]) {
      for (const suffix of ['', '/analysis', '/listings']) {
        expectError(
          await t.app.inject({ method: 'GET', url: `/api/v1/competitors/${id}${suffix}`, headers }),
          404,
          'not_found',
        );
      }
      expectError(
        await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${id}`, headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({ method: 'PUT', url: `/api/v1/competitors/${id}`, headers, payload: { name: 'x' } }),
        404,
        'not_found',
      );
    }
  });
});
