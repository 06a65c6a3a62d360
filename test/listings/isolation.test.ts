import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, rowsOf } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, PREFIXES } from '../products/support.js';

describe('listings: tenant isolation and references', () => {
  const t = useTestApp();

  async function twoAccounts() {
    const owner = await t.newKey();
    const other = await t.newKey();
    const theirProduct = await createProduct(t, owner.headers, {
      name: 'Secret product',
      url: 'https://secret.example/p',
    });
    const theirCompetitor = await createCompetitor(t, owner.headers, {
      name: 'Secret rival',
      website: 'https://hidden.example',
    });
    const theirListing = await createListing(t, owner.headers, {
      product_id: theirProduct.id,
      competitor_id: theirCompetitor.id,
      url: 'https://hidden.example/p',
      selector: '.secret',
    });
    const myProduct = await createProduct(t, other.headers, { url: 'https://mine.example/p' });
    const myCompetitor = await createCompetitor(t, other.headers, {
      name: 'Mine',
      website: 'https://mine-rival.example',
    });
    return { owner, other, theirProduct, theirCompetitor, theirListing, myProduct, myCompetitor };
  }

  it("treats another account's product or competitor in a new listing exactly like one that does not exist", async () => {
    const { owner, other, theirProduct, theirCompetitor, myProduct, myCompetitor } = await twoAccounts();
    const before = await rowsOf(t, 'listings', owner.accountId);
    const post = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/api/v1/listings', headers: other.headers, payload });
    const pairs: [object, object, string[]][] = [
      [{ product_id: theirProduct.id }, { product_id: 'prod_0000000000nonexistent0000' }, ['product_id']],
      [
        { product_id: myProduct.id, competitor_id: theirCompetitor.id, url: 'https://hidden.example/x' },
        { product_id: myProduct.id, competitor_id: 'comp_0000000000nonexistent0000', url: 'https://hidden.example/x' },
        ['competitor_id'],
      ],
      [
        { product_id: theirProduct.id, competitor_id: theirCompetitor.id, url: 'https://hidden.example/x' },
        {
          product_id: 'prod_0000000000nonexistent0000',
          competitor_id: 'comp_0000000000nonexistent0000',
          url: 'https://hidden.example/x',
        },
        ['competitor_id', 'product_id'],
      ],
      [
        { product_id: theirProduct.id, competitor_id: myCompetitor.id, url: 'https://mine-rival.example/x' },
        {
          product_id: 'prod_0000000000nonexistent0000',
          competitor_id: myCompetitor.id,
          url: 'https://mine-rival.example/x',
        },
        ['product_id'],
      ],
    ];
    for (const [foreign, missing, fields] of pairs) {
      const a = expectError(await post(foreign), 422, 'validation_failed');
      const b = expectError(await post(missing), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(a), fields);
      assert.deepEqual(a.details, b.details, "same answer for another account's id and a missing one");
      assert.equal(a.error, b.error);
    }
    assert.deepEqual(await rowsOf(t, 'listings', owner.accountId), before);
    assert.equal((await rowsOf(t, 'listings', other.accountId)).length, 0);
  });

  for (const prefix of PREFIXES) {
    it(`answers another account's listing, product listings and competitor listings 404 under ${prefix}`, async () => {
      const { owner, other, theirListing, theirProduct, theirCompetitor } = await twoAccounts();
      const before = await rowsOf(t, 'listings', owner.accountId);
      const missing = expectError(
        await t.app.inject({
          method: 'GET',
          url: `${prefix}/listings/lst_0000000000nonexistent000`,
          headers: other.headers,
        }),
        404,
        'not_found',
      );
      const url = `${prefix}/listings/${theirListing.id}`;
      for (const [method, path, payload] of [
        ['GET', url, undefined],
        ['GET', `${url}/checks`, undefined],
        ['PUT', url, { selector: '.mine' }],
        ['PATCH', url, { enabled: false }],
        ['DELETE', url, undefined],
      ] as const) {
        const res = await t.app.inject({ method, url: path, headers: other.headers, ...(payload ? { payload } : {}) });
        const body = expectError(res, 404, 'not_found');
        assert.equal(body.error, missing.error, `${method} ${path}`);
        assert.doesNotMatch(res.body, /secret|hidden/i);
      }
      for (const path of [
        `${prefix}/products/${theirProduct.id}/listings`,
        `${prefix}/competitors/${theirCompetitor.id}/listings`,
      ]) {
        const res = await t.app.inject({ method: 'GET', url: path, headers: other.headers });
        expectError(res, 404, 'not_found');
        assert.doesNotMatch(res.body, /secret|hidden/i);
      }
      assert.deepEqual(await rowsOf(t, 'listings', owner.accountId), before);
    });
  }

  it("never lists another account's listings, whatever the filter", async () => {
    const { other, theirListing, theirProduct, theirCompetitor, myProduct } = await twoAccounts();
    const mine = await createListing(t, other.headers, { product_id: myProduct.id });
    for (const q of [
      '',
      `product_id=${theirProduct.id}`,
      `competitor_id=${theirCompetitor.id}`,
      'own=false',
      'status=pending',
      'enabled=true',
      'sort=next_check_at',
    ]) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/listings?${q}`, headers: other.headers });
      assert.equal(res.statusCode, 200, res.body);
      const ids = res.json<{ data: { id: string }[] }>().data.map((l) => l.id);
      assert.ok(!ids.includes(theirListing.id), q);
      assert.ok(
        ids.every((id) => id === mine.id),
        q,
      );
    }
  });

  it('needs a key for every listing route', async () => {
    const { theirListing, theirProduct } = await twoAccounts();
    for (const [method, url] of [
      ['GET', '/api/v1/listings'],
      ['POST', '/api/v1/listings'],
      ['GET', `/api/v1/listings/${theirListing.id}`],
      ['PUT', `/api/v1/listings/${theirListing.id}`],
      ['PATCH', `/v1/listings/${theirListing.id}`],
      ['DELETE', `/api/v1/listings/${theirListing.id}`],
      ['GET', `/api/v1/listings/${theirListing.id}/checks`],
      ['GET', `/api/v1/products/${theirProduct.id}/listings`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' || method === 'DELETE' ? undefined : '{}',
      });
      expectError(res, 401, 'unauthorized');
    }
  });

  it('answers 404 for listing ids that cannot exist, never 500', async () => {
    const { headers } = await t.newKey();
    for (const id of [
      'lst_doesnotexist',
      'prod_abc',
      'nope',
      'x'.repeat(64),
      'lst_%00',
      "lst_'%3B drop table listings",
    ]) {
      for (const suffix of ['', '/checks'])
        expectError(
          await t.app.inject({ method: 'GET', url: `/api/v1/listings/${id}${suffix}`, headers }),
          404,
          'not_found',
        );
      expectError(
        await t.app.inject({ method: 'PATCH', url: `/api/v1/listings/${id}`, headers, payload: { enabled: true } }),
        404,
        'not_found',
      );
      expectError(await t.app.inject({ method: 'DELETE', url: `/api/v1/listings/${id}`, headers }), 404, 'not_found');
      expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/products/${id.replace('lst_', 'prod_')}/listings`, headers }),
        404,
        'not_found',
      );
    }
  });
});
