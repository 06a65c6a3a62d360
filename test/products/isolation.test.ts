import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, PREFIXES, snapshot } from './support.js';
import type { Product } from '../helpers/api-types.js';

describe('products: tenant isolation', () => {
  const t = useTestApp();

  async function twoAccounts() {
    const owner = await t.newKey();
    const other = await t.newKey();
    const secret = await createProduct(t, owner.headers, {
      name: 'Secret gadget',
      brand: 'Hidden',
      sku: 'SECRET-1',
      category: 'private',
      description: 'only the owner may see this',
      base_price: 42.42,
      currency: 'EUR',
    });
    const mine = await createProduct(t, other.headers, { name: 'Public thing', sku: 'OTHER-1' });
    return { owner, other, secret, mine };
  }

  for (const prefix of PREFIXES) {
    it(`answers another account's product 404 for GET, PUT, PATCH and DELETE under ${prefix}`, async () => {
      const { owner, other, secret } = await twoAccounts();
      const before = await snapshot(t, owner.accountId);
      const url = `${prefix}/products/${secret.id}`;
      const own404 = expectError(
        await t.app.inject({
          method: 'GET',
          url: `${prefix}/products/prod_0000000000nonexistent000`,
          headers: other.headers,
        }),
        404,
        'not_found',
      );
      const cases = [
        await t.app.inject({ method: 'GET', url, headers: other.headers }),
        await t.app.inject({
          method: 'PUT',
          url,
          headers: other.headers,
          payload: { name: 'hijacked', base_price: 0 },
        }),
        await t.app.inject({ method: 'PATCH', url, headers: other.headers, payload: { sku: null } }),
        await t.app.inject({ method: 'DELETE', url, headers: other.headers }),
        await t.app.inject({ method: 'HEAD', url, headers: other.headers }),
      ];
      for (const res of cases.slice(0, 4)) {
        const body = expectError(res, 404, 'not_found');
        // Indistinguishable from a product that does not exist at all.
        assert.equal(body.error, own404.error);
        assert.doesNotMatch(res.body, /Secret|Hidden|SECRET|42\.42/);
      }
      assert.equal(cases[4]!.statusCode, 404);
      assert.deepEqual(await snapshot(t, owner.accountId), before, "the owner's data is unchanged");
      const still = await t.app.inject({ method: 'GET', url, headers: owner.headers });
      assert.deepEqual(still.json(), secret);
    });
  }

  it("never lists or filters in another account's products", async () => {
    const { other, secret, mine } = await twoAccounts();
    const queries = [
      '',
      'limit=100',
      'sku=SECRET-1',
      'brand=Hidden',
      'category=private',
      'currency=EUR',
      'q=secret',
      'q=only%20the%20owner',
      'min_price=42&max_price=43',
      'sort=name',
      'sort=-base_price',
      'created_after=2000-01-01T00:00:00Z',
    ];
    for (const q of queries) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products?${q}`, headers: other.headers });
      assert.equal(res.statusCode, 200, res.body);
      const ids = res.json<{ data: Product[] }>().data.map((p) => p.id);
      assert.ok(!ids.includes(secret.id), q);
      assert.doesNotMatch(res.body, /Secret|Hidden/);
      assert.ok(
        ids.every((id) => id === mine.id),
        q,
      );
    }
  });

  it("does not let a cursor from one account reveal another account's products", async () => {
    const { owner, other, secret } = await twoAccounts();
    await createProduct(t, owner.headers, { name: 'Second secret' });
    const page = await t.app.inject({ method: 'GET', url: '/api/v1/products?limit=1', headers: owner.headers });
    const cursor = page.json<{ pagination: { next_cursor: string } }>().pagination.next_cursor;
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/products?limit=1&cursor=${encodeURIComponent(cursor)}`,
      headers: other.headers,
    });
    assert.equal(res.statusCode, 200);
    assert.ok(!res.body.includes(secret.id));
    assert.doesNotMatch(res.body, /secret/i);
  });

  it("does not reveal another account's SKU through a conflict", async () => {
    const { other, secret } = await twoAccounts();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: other.headers,
      payload: { name: 'x', base_price: 1, currency: 'USD', sku: 'SECRET-1' },
    });
    assert.equal(res.statusCode, 201, 'the SKU is free in this account');
    assert.ok(!res.body.includes(secret.id));
  });

  it('keeps data apart between keys of different accounts but shares it between keys of one', async () => {
    const a = await t.newKey();
    const a2 = await t.newKey('starter', a.accountId);
    const p = await createProduct(t, a.headers);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers: a2.headers })).statusCode,
      200,
    );
    assert.equal(
      (await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${p.id}`, headers: a2.headers })).statusCode,
      204,
    );
  });

  it('needs a key for every product route', async () => {
    const { secret } = await twoAccounts();
    for (const [method, url] of [
      ['GET', '/api/v1/products'],
      ['POST', '/api/v1/products'],
      ['POST', '/api/v1/products/batch'],
      ['GET', `/api/v1/products/${secret.id}`],
      ['PUT', `/api/v1/products/${secret.id}`],
      ['PATCH', `/api/v1/products/${secret.id}`],
      ['DELETE', `/api/v1/products/${secret.id}`],
      ['GET', `/v1/products/${secret.id}`],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' || method === 'DELETE' ? undefined : '{}',
      });
      expectError(res, 401, 'unauthorized');
      assert.doesNotMatch(res.body, /Secret/);
    }
  });
});
