import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { countProducts, createProduct, expectError, fieldsOf, type Headers, snapshot } from './support.js';
import type { Product, ProductBatchResult } from '../helpers/api-types.js';

const item = (i: number, extra: Record<string, unknown> = {}) => ({
  name: `Item ${i}`,
  base_price: i / 100,
  currency: 'usd',
  sku: `SKU-${i}`,
  ...extra,
});

describe('products: batch create', () => {
  const t = useTestApp();

  const batch = (headers: Headers, payload: unknown, prefix = '/api/v1') =>
    t.app.inject({ method: 'POST', url: `${prefix}/products/batch`, headers, payload: payload as object });

  it('creates 1000 products in one request', async () => {
    const { headers, accountId } = await t.newKey();
    const products = Array.from({ length: 1000 }, (_, i) => item(i, { description: 'd'.repeat(100) }));
    const res = await batch(headers, { products });
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    const out = res.json<ProductBatchResult>();
    assert.equal(out.created, 1000);
    assert.equal(out.failed, 0);
    assert.equal(out.data.length, 1000);
    out.data.forEach((r, i) => {
      assert.equal(r.index, i);
      assert.equal(r.status, 201);
      assert.equal(r.product!.sku, `SKU-${i}`);
      assert.equal(r.product!.base_price, i / 100);
      assert.equal(r.product!.currency, 'USD');
    });
    assert.equal(await countProducts(t, accountId), 1000);
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${out.data[999]!.product!.id}`, headers });
    assert.equal(got.json<Product>().name, 'Item 999');
  });

  it('refuses 1001 products with 422 and creates none', async () => {
    const { headers, accountId } = await t.newKey();
    const res = await batch(headers, { products: Array.from({ length: 1001 }, (_, i) => item(i)) });
    const err = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(err), ['products']);
    assert.match(err.details![0]!.message, /1000/);
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('refuses an empty or malformed envelope with 422', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [payload, field] of [
      [{ products: [] }, 'products'],
      [{}, 'products'],
      [{ products: 'x' }, 'products'],
      [{ products: [item(1)], atomic: 'yes' }, 'atomic'],
      [{ products: [item(1)], extra: true }, 'extra'],
      [[item(1)], '(body)'],
    ] as const) {
      const err = expectError(await batch(headers, payload), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), [field], JSON.stringify(payload).slice(0, 80));
    }
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('reports each item of a mixed batch and creates only the valid ones', async () => {
    const { headers, accountId } = await t.newKey();
    const existing = await createProduct(t, headers, { sku: 'EXISTING' });
    const products = [
      item(0), // 201
      { name: '', base_price: -1, currency: 'XYZ', colour: 'red' }, // 422, several fields
      item(2, { sku: 'EXISTING' }), // 409: taken by an existing product
      item(3, { sku: 'TWICE' }), // 201
      item(4, { sku: 'TWICE' }), // 409: repeats item 3
      'not an object', // 422
      item(6, { base_price: '1.00' }), // 422: no coercion
      item(7, { sku: null }), // 201
      item(8, { name: 'a\u0000b' }), // 422
      item(9, { sku: null }), // 201
    ];
    const res = await batch(headers, { products });
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json<ProductBatchResult>();
    assert.deepEqual(
      out.data.map((r) => [r.index, r.status]),
      [
        [0, 201],
        [1, 422],
        [2, 409],
        [3, 201],
        [4, 409],
        [5, 422],
        [6, 422],
        [7, 201],
        [8, 422],
        [9, 201],
      ],
    );
    assert.equal(out.created, 4);
    assert.equal(out.failed, 6);
    for (const r of out.data) {
      if (r.status === 201) {
        assert.ok(r.product && !r.error);
        assert.match(r.product.id, /^prod_/);
      } else {
        assert.ok(r.error && !r.product);
        assert.equal(r.error.code, r.status === 409 ? 'conflict' : 'validation_failed');
        assert.ok(r.error.details && r.error.details.length > 0);
      }
    }
    assert.deepEqual(out.data[1]!.error!.details!.map((d) => d.field).sort(), [
      'base_price',
      'colour',
      'currency',
      'name',
    ]);
    assert.deepEqual(
      out.data[2]!.error!.details!.map((d) => d.field),
      ['sku'],
    );
    assert.match(out.data[2]!.error!.details![0]!.message, new RegExp(existing.id));
    assert.match(out.data[4]!.error!.details![0]!.message, /item 3/);
    assert.deepEqual(
      out.data[6]!.error!.details!.map((d) => d.field),
      ['base_price'],
    );
    assert.deepEqual(
      out.data[8]!.error!.details!.map((d) => d.field),
      ['name'],
    );
    assert.equal(await countProducts(t, accountId), 1 + 4);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/products?limit=100&sort=name', headers });
    assert.deepEqual(
      list.json<{ data: Product[] }>().data.map((p) => p.name),
      ['Item 0', 'Item 3', 'Item 7', 'Item 9', 'Widget'],
    );
  });

  it('with atomic: true creates nothing when one item is invalid and names products[i].field', async () => {
    const { headers, accountId } = await t.newKey();
    await createProduct(t, headers, { sku: 'EXISTING' });
    const before = await snapshot(t, accountId);
    const products = [
      item(0),
      item(1, { base_price: 1.23456 }),
      item(2),
      item(3, { currency: 'nope', url: 'ftp://x' }),
    ];
    const err = expectError(await batch(headers, { products, atomic: true }), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(err), ['products[1].base_price', 'products[3].currency', 'products[3].url']);
    assert.deepEqual(await snapshot(t, accountId), before);
  });

  it('with atomic: true creates nothing when one SKU is taken, and says so', async () => {
    const { headers, accountId } = await t.newKey();
    await createProduct(t, headers, { sku: 'EXISTING' });
    const before = await snapshot(t, accountId);
    const res = await batch(headers, { products: [item(0), item(1, { sku: 'EXISTING' }), item(2)], atomic: true });
    assert.ok(res.statusCode === 409 || res.statusCode === 422, res.body);
    const err = res.json<{ details: { field: string }[] }>();
    assert.deepEqual(
      err.details.map((d) => d.field),
      ['products[1].sku'],
    );
    assert.deepEqual(await snapshot(t, accountId), before);
    // Repeated within the batch.
    const dup = await batch(headers, { products: [item(0, { sku: 'D' }), item(1, { sku: 'D' })], atomic: true });
    assert.ok(dup.statusCode === 409 || dup.statusCode === 422, dup.body);
    assert.deepEqual(
      dup.json<{ details: { field: string }[] }>().details.map((d) => d.field),
      ['products[1].sku'],
    );
    assert.deepEqual(await snapshot(t, accountId), before);
  });

  it('with atomic: true and every item valid creates all of them', async () => {
    const { headers, accountId } = await t.newKey();
    const res = await batch(headers, { products: [item(0), item(1), item(2)], atomic: true }, '/v1');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<ProductBatchResult>().created, 3);
    assert.equal(await countProducts(t, accountId), 3);
  });

  it('names a non-object item by its index alone', async () => {
    const { headers } = await t.newKey();
    const err = expectError(await batch(headers, { products: [item(0), 42], atomic: true }), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(err), ['products[1]']);
    const res = await batch(headers, { products: [null] });
    const out = res.json<ProductBatchResult>();
    assert.equal(out.data[0]!.status, 422);
    assert.ok(out.data[0]!.error!.details!.length > 0);
  });

  it('keeps money exact and SKUs per account in batches too', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    await createProduct(t, a.headers, { sku: 'X' });
    const prices = [0.1, 19.99, 1234567.8912, 0, 99999999999.9999];
    const res = await batch(b.headers, {
      products: prices.map((p, i) => item(i, { base_price: p, sku: i === 0 ? 'X' : `P${i}` })),
    });
    const out = res.json<ProductBatchResult>();
    assert.equal(out.created, prices.length, 'SKU X of account A does not conflict in account B');
    assert.deepEqual(
      out.data.map((r) => r.product!.base_price),
      prices,
    );
  });

  it('accepts a batch body over 1 MiB and refuses one over 10 MiB with 413', async () => {
    const { headers, accountId } = await t.newKey();
    const big = Array.from({ length: 300 }, (_, i) => item(i, { description: 'x'.repeat(9_000) })); // ~2.7 MB
    const ok = await batch(headers, { products: big });
    assert.equal(ok.statusCode, 200, ok.body.slice(0, 300));
    assert.equal(ok.json<ProductBatchResult>().created, 300);
    const huge = Array.from({ length: 1000 }, (_, i) => item(i + 1000, { description: 'y'.repeat(10_500) })); // ~10.6 MB > 10 MiB
    const res = await batch(headers, { products: huge });
    expectError(res, 413, 'payload_too_large');
    assert.equal(await countProducts(t, accountId), 300);
  });
});
