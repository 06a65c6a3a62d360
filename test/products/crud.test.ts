import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { countProducts, createProduct, expectError, fieldsOf, PREFIXES, snapshot } from './support.js';
import type { Product } from '../helpers/api-types.js';

const full = {
  name: 'Espresso machine',
  brand: 'Brewco',
  sku: 'BC-100',
  category: 'kitchen',
  description: 'Makes coffee',
  base_price: 249.5,
  currency: 'EUR',
  url: 'https://shop.example/bc-100',
};

describe('products: create, read, update, delete', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`walks the whole lifecycle under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const created = await t.app.inject({ method: 'POST', url: `${prefix}/products`, headers, payload: full });
      assert.equal(created.statusCode, 201, created.body);
      const p = created.json<Product>();
      assert.match(p.id, /^prod_[0-9a-z]+$/);
      assert.equal(created.headers.location, `${prefix}/products/${p.id}`);
      assert.deepEqual(
        { ...p, id: undefined, created_at: undefined, updated_at: undefined },
        {
          ...full,
          id: undefined,
          object: 'product',
          created_at: undefined,
          updated_at: undefined,
          // No listings yet: the empty monitoring summary (test/listings/summary.test.ts covers the rest).
          monitoring: {
            listing_count: 0,
            lowest_competitor_price: null,
            last_checked_at: null,
            // No prices yet: ours is the base_price and there is nobody to compare with (test/products/position.test.ts).
            position: {
              own_price: full.base_price,
              own_price_source: 'base_price',
              competitors_compared: 0,
              competitors_left_out: 0,
              rank: null,
              price_index: null,
              cheapest: null,
            },
          },
        },
      );
      assert.ok(!Number.isNaN(Date.parse(p.created_at)));
      assert.match(p.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(p.updated_at, p.created_at);

      const got = await t.app.inject({ method: 'GET', url: String(created.headers.location), headers });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.json(), p);

      const put = await t.app.inject({
        method: 'PUT',
        url: `${prefix}/products/${p.id}`,
        headers,
        payload: { base_price: 199 },
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(put.json<Product>().base_price, 199);

      const del = await t.app.inject({ method: 'DELETE', url: `${prefix}/products/${p.id}`, headers });
      assert.equal(del.statusCode, 204);
      assert.equal(del.body, '');
      expectError(await t.app.inject({ method: 'GET', url: `${prefix}/products/${p.id}`, headers }), 404, 'not_found');
      expectError(
        await t.app.inject({ method: 'DELETE', url: `${prefix}/products/${p.id}`, headers }),
        404,
        'not_found',
      );
      expectError(
        await t.app.inject({ method: 'PUT', url: `${prefix}/products/${p.id}`, headers, payload: { name: 'x' } }),
        404,
        'not_found',
      );
    });
  }

  it('answers a product created under one prefix under the other too', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers, { name: 'Shared' }, '/v1');
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    assert.equal(got.json<Product>().name, 'Shared');
  });

  it('fills optional fields with null when they are not sent', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers, { name: 'Bare', base_price: 1, currency: 'USD' });
    assert.equal(p.brand, null);
    assert.equal(p.sku, null);
    assert.equal(p.category, null);
    assert.equal(p.description, null);
    assert.equal(p.url, null);
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    it(`${method} changes only the supplied fields`, async () => {
      const { headers } = await t.newKey();
      const p = await createProduct(t, headers, full);
      const res = await t.app.inject({
        method,
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { name: 'Renamed', currency: 'gbp' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json<Product>();
      assert.deepEqual(
        { ...u, updated_at: undefined },
        { ...p, name: 'Renamed', currency: 'GBP', updated_at: undefined },
      );
      assert.ok(Date.parse(u.updated_at) > Date.parse(p.updated_at), 'updated_at moves forward');
      assert.equal(u.created_at, p.created_at);
      const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
      assert.deepEqual(got.json(), u);
    });

    it(`${method} can change every field from creation`, async () => {
      const { headers } = await t.newKey();
      const p = await createProduct(t, headers, full);
      const next = {
        name: 'N',
        brand: 'B2',
        sku: 'S2',
        category: 'c2',
        description: 'd2',
        base_price: 0.5,
        currency: 'JPY',
        url: 'http://other.example/',
      };
      const res = await t.app.inject({ method, url: `/api/v1/products/${p.id}`, headers, payload: next });
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json<Product>();
      assert.deepEqual(
        { ...u, id: p.id, object: 'product', created_at: p.created_at, updated_at: u.updated_at },
        { ...u, ...next },
      );
    });

    it(`${method} with null clears optional fields`, async () => {
      const { headers } = await t.newKey();
      const p = await createProduct(t, headers, full);
      const res = await t.app.inject({
        method,
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { brand: null, sku: null, category: null, description: null, url: null },
      });
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json<Product>();
      assert.deepEqual([u.brand, u.sku, u.category, u.description, u.url], [null, null, null, null, null]);
      assert.equal(u.name, full.name);
      assert.equal(u.base_price, full.base_price);
      // A cleared SKU is free again.
      await createProduct(t, headers, { sku: full.sku });
    });

    it(`${method} refuses null for required fields and changes nothing`, async () => {
      const { headers, accountId } = await t.newKey();
      const p = await createProduct(t, headers, full);
      const before = await snapshot(t, accountId);
      const res = await t.app.inject({
        method,
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { name: null, base_price: null, currency: null, brand: 'changed' },
      });
      const body = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['base_price', 'currency', 'name']);
      assert.deepEqual(await snapshot(t, accountId), before);
    });

    it(`${method} with an empty object changes nothing`, async () => {
      const { headers } = await t.newKey();
      const p = await createProduct(t, headers, full);
      const res = await t.app.inject({ method, url: `/api/v1/products/${p.id}`, headers, payload: {} });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), p);
    });
  }

  it('moves updated_at on every update, even two in quick succession', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    let last = p.updated_at;
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { base_price: i },
      });
      const u = res.json<Product>();
      assert.ok(Date.parse(u.updated_at) > Date.parse(last), `${u.updated_at} > ${last}`);
      assert.equal(u.created_at, p.created_at);
      last = u.updated_at;
    }
  });

  it('moves updated_at forward even when the clock has not (same millisecond, clock skew)', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    // As if the previous update had happened "later" than now, e.g. within the same millisecond.
    const ahead = new Date(Date.now() + 3_600_000);
    await t.rt.db.query('update products set updated_at = $2 where id = $1', [p.id, ahead]);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { name: 'later' },
    });
    assert.ok(Date.parse(res.json<Product>().updated_at) > ahead.getTime());
  });

  it('answers 404 for ids that cannot exist, never 500', async () => {
    const { headers } = await t.newKey();
    for (const id of [
      'prod_doesnotexist',
      'nope',
      'x'.repeat(64),
      'prod_%00',
      '%E2%9C%93',
      "prod_'%3B drop table products",
    ]) {
      for (const method of ['GET', 'DELETE'] as const) {
        expectError(await t.app.inject({ method, url: `/api/v1/products/${id}`, headers }), 404, 'not_found');
      }
      expectError(
        await t.app.inject({ method: 'PUT', url: `/api/v1/products/${id}`, headers, payload: { name: 'x' } }),
        404,
        'not_found',
      );
    }
  });

  it("answers over-long and badly encoded ids with our JSON error, never Fastify's own", async () => {
    const { headers } = await t.newKey();
    expectError(
      await t.app.inject({ method: 'GET', url: `/api/v1/products/${'x'.repeat(300)}`, headers }),
      404,
      'not_found',
    );
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/products/%zz', headers }), 400, 'invalid_request');
  });

  it('DELETE and GET work with Content-Type: application/json and no body', async () => {
    const { headers, accountId } = await t.newKey();
    assert.equal(headers['content-type'], 'application/json');
    const p = await createProduct(t, headers);
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    assert.equal(got.statusCode, 200);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers });
    assert.equal(list.statusCode, 200);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${p.id}`, headers });
    assert.equal(del.statusCode, 204);
    assert.equal(await countProducts(t, accountId), 0);
    // Also with an explicit Content-Length: 0, as curl -X DELETE -H ... sends it.
    const q = await createProduct(t, headers);
    const del2 = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/products/${q.id}`,
      headers: { ...headers, 'content-length': '0' },
    });
    assert.equal(del2.statusCode, 204);
  });

  it('deleting one product leaves the others alone', async () => {
    const { headers, accountId } = await t.newKey();
    const a = await createProduct(t, headers, { name: 'a' });
    const b = await createProduct(t, headers, { name: 'b' });
    await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${a.id}`, headers });
    assert.equal(await countProducts(t, accountId), 1);
    assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/products/${b.id}`, headers })).statusCode, 200);
  });
});

describe('products: unique SKU per account', () => {
  const t = useTestApp();

  it('refuses a second product with the same SKU with 409 and details', async () => {
    const { headers, accountId } = await t.newKey();
    const first = await createProduct(t, headers, { sku: 'DUP-1' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'Other', base_price: 1, currency: 'USD', sku: 'DUP-1' },
    });
    const body = expectError(res, 409, 'conflict');
    assert.deepEqual(fieldsOf(body), ['sku']);
    assert.match(body.details![0]!.message, new RegExp(first.id));
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('treats SKUs as case-sensitive and exact', async () => {
    const { headers } = await t.newKey();
    await createProduct(t, headers, { sku: 'abc' });
    await createProduct(t, headers, { sku: 'ABC' });
    await createProduct(t, headers, { sku: 'abc ' });
  });

  it('lets many products go without a SKU', async () => {
    const { headers, accountId } = await t.newKey();
    await createProduct(t, headers);
    await createProduct(t, headers, { sku: null });
    await createProduct(t, headers);
    assert.equal(await countProducts(t, accountId), 3);
  });

  it('refuses an update to a SKU in use with 409 and changes nothing', async () => {
    const { headers, accountId } = await t.newKey();
    await createProduct(t, headers, { sku: 'TAKEN' });
    const p = await createProduct(t, headers, { sku: 'MINE', name: 'Mine' });
    const before = await snapshot(t, accountId);
    for (const method of ['PUT', 'PATCH'] as const) {
      const res = await t.app.inject({
        method,
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { sku: 'TAKEN', name: 'Should not stick' },
      });
      const body = expectError(res, 409, 'conflict');
      assert.deepEqual(fieldsOf(body), ['sku']);
    }
    assert.deepEqual(await snapshot(t, accountId), before);
  });

  it('lets exactly one of several concurrent creates or updates take a SKU', async () => {
    const { headers, accountId } = await t.newKey();
    const creates = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t.app.inject({
          method: 'POST',
          url: '/api/v1/products',
          headers,
          payload: { name: `race ${i}`, base_price: 1, currency: 'USD', sku: 'RACE' },
        }),
      ),
    );
    assert.deepEqual(creates.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409]);
    for (const r of creates.filter((x) => x.statusCode === 409)) expectError(r, 409, 'conflict');
    assert.equal(await countProducts(t, accountId), 1);

    const others = await Promise.all([createProduct(t, headers), createProduct(t, headers), createProduct(t, headers)]);
    const updates = await Promise.all(
      others.map((p) =>
        t.app.inject({ method: 'PATCH', url: `/api/v1/products/${p.id}`, headers, payload: { sku: 'RACE-2' } }),
      ),
    );
    assert.deepEqual(updates.map((r) => r.statusCode).sort(), [200, 409, 409]);
    const r = await t.rt.db.query<{ n: number }>(
      "select count(*)::int as n from products where account_id = $1 and sku = 'RACE-2'",
      [accountId],
    );
    assert.equal(Number(r.rows[0]!.n), 1);
  });

  it("allows an update that keeps the product's own SKU", async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers, { sku: 'SELF' });
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { sku: 'SELF', name: 'ok' },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('allows the same SKU in another account', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    await createProduct(t, a.headers, { sku: 'SHARED' });
    const pb = await createProduct(t, b.headers, { sku: 'SHARED' });
    assert.equal(pb.sku, 'SHARED');
    // And an update in B to a SKU only A uses.
    await createProduct(t, a.headers, { sku: 'ONLY-A' });
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${pb.id}`,
      headers: b.headers,
      payload: { sku: 'ONLY-A' },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('lets two keys of one account see the same SKU space', async () => {
    const a = await t.newKey();
    const a2 = await t.newKey('business', a.accountId);
    await createProduct(t, a.headers, { sku: 'ACC' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: a2.headers,
      payload: { name: 'x', base_price: 1, currency: 'USD', sku: 'ACC' },
    });
    expectError(res, 409, 'conflict');
  });
});
