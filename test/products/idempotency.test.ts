import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { Contract, fetchDocument } from '../openapi/support.js';
import { countProducts, expectError, fieldsOf, type Headers } from './support.js';
import type { Product } from '../helpers/api-types.js';

const body = { name: 'Idempotent', base_price: 9.99, currency: 'USD' };

describe('products: Idempotency-Key', () => {
  const t = useTestApp();

  const post = (headers: Headers, key: string | undefined, payload: unknown, url = '/api/v1/products') =>
    t.app.inject({
      method: 'POST',
      url,
      headers: key === undefined ? headers : { ...headers, 'idempotency-key': key },
      payload: payload as object,
    });

  it('replays the first response for the same key and body and creates nothing new', async () => {
    const { headers, accountId } = await t.newKey();
    const first = await post(headers, 'key-1', body);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const p = first.json<Product>();
    for (let i = 0; i < 3; i++) {
      const again = await post(headers, 'key-1', body);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), p);
      assert.equal(again.headers.location, first.headers.location);
      assert.match(String(again.headers['content-type']), /^application\/json/);
    }
    assert.equal(await countProducts(t, accountId), 1);
    // Key order and formatting of the JSON do not matter, only its meaning.
    const reordered = await post(headers, 'key-1', '{ "currency":"USD",  "base_price":9.99, "name":"Idempotent" }');
    assert.equal(reordered.statusCode, 201);
    assert.equal(reordered.json<Product>().id, p.id);
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('treats /v1 and /api/v1 as one endpoint for a key', async () => {
    const { headers, accountId } = await t.newKey();
    const first = await post(headers, 'k', body, '/v1/products');
    const again = await post(headers, 'k', body, '/api/v1/products');
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json<Product>().id, first.json<Product>().id);
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('answers a replay with the 404 of a resource deleted since, and creates nothing', async () => {
    const { headers, accountId } = await t.newKey();
    const first = await post(headers, 'gone', body);
    assert.equal(first.statusCode, 201);
    const { id } = first.json<Product>();
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${id}`, headers })).statusCode, 204);
    const replay = await post(headers, 'gone', body);
    const err = expectError(replay, 404, 'not_found');
    assert.equal(err.error, 'Product not found');
    assert.deepEqual(fieldsOf(err), ['Idempotency-Key']);
    assert.equal(replay.headers['idempotent-replayed'], undefined);
    assert.equal(await countProducts(t, accountId), 0);
    // A create declares that 404 too (every idempotent route that answers a resource does).
    new Contract(await fetchDocument(t.app)).check('POST', '/api/v1/products', replay);
  });

  it('refuses the same key with another body with 409 and creates nothing', async () => {
    const { headers, accountId } = await t.newKey();
    await post(headers, 'key-2', body);
    const res = await post(headers, 'key-2', { ...body, base_price: 10 });
    const err = expectError(res, 409, 'conflict');
    assert.deepEqual(fieldsOf(err), ['Idempotency-Key']);
    // ... and on the other endpoint.
    const batch = await post(headers, 'key-2', { products: [body] }, '/api/v1/products/batch');
    expectError(batch, 409, 'conflict');
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('scopes keys to the account', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    const ra = await post(a.headers, 'shared-key', body);
    const rb = await post(b.headers, 'shared-key', { ...body, name: 'B' });
    assert.equal(rb.statusCode, 201);
    assert.equal(rb.headers['idempotent-replayed'], undefined);
    assert.notEqual(rb.json<Product>().id, ra.json<Product>().id);
    assert.equal(rb.json<Product>().name, 'B');
    // Same body too: still two products, one per account.
    const b2 = await post(b.headers, 'shared-key-2', body);
    const a2 = await post(a.headers, 'shared-key-2', body);
    assert.notEqual(a2.json<Product>().id, b2.json<Product>().id);
    assert.equal(await countProducts(t, a.accountId), 2);
    assert.equal(await countProducts(t, b.accountId), 2);
  });

  it('does not store a 422, so the corrected request can reuse the key', async () => {
    const { headers, accountId } = await t.newKey();
    const bad = await post(headers, 'fix-me', { ...body, base_price: -1 });
    expectError(bad, 422, 'validation_failed');
    const again = await post(headers, 'fix-me', { ...body, base_price: -1 });
    expectError(again, 422, 'validation_failed');
    assert.equal(again.headers['idempotent-replayed'], undefined);
    const good = await post(headers, 'fix-me', body);
    assert.equal(good.statusCode, 201, good.body);
    assert.equal(good.headers['idempotent-replayed'], undefined);
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('does not store an atomic batch refused as invalid either', async () => {
    const { headers, accountId } = await t.newKey();
    const bad = await post(
      headers,
      'batch-fix',
      { products: [body, { ...body, currency: 'nope' }], atomic: true },
      '/api/v1/products/batch',
    );
    expectError(bad, 422, 'validation_failed');
    const good = await post(headers, 'batch-fix', { products: [body, body], atomic: true }, '/api/v1/products/batch');
    assert.equal(good.statusCode, 200, good.body);
    assert.equal(await countProducts(t, accountId), 2);
  });

  it('replays a 409 SKU conflict as it was', async () => {
    const { headers, accountId } = await t.newKey();
    await post(headers, undefined, { ...body, sku: 'S' });
    const conflict = await post(headers, 'dup', { ...body, sku: 'S' });
    expectError(conflict, 409, 'conflict');
    const replay = await post(headers, 'dup', { ...body, sku: 'S' });
    assert.equal(replay.statusCode, 409);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('refuses invalid Idempotency-Key headers with 422 and creates nothing', async () => {
    const { headers, accountId } = await t.newKey();
    for (const key of ['', ' ', 'has space', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'idempotency-key': key },
        payload: body,
      });
      const err = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), ['Idempotency-Key'], JSON.stringify(key));
    }
    assert.equal(await countProducts(t, accountId), 0);
    assert.equal((await post(headers, 'x'.repeat(255), body)).statusCode, 201);
  });

  it('creates without a key as often as asked', async () => {
    const { headers, accountId } = await t.newKey();
    await post(headers, undefined, body);
    await post(headers, undefined, body);
    assert.equal(await countProducts(t, accountId), 2);
  });

  it('lets only one of two concurrent requests with the same key create', async () => {
    const { headers, accountId } = await t.newKey();
    const results = await Promise.all([
      post(headers, 'race', body),
      post(headers, 'race', body),
      post(headers, 'race', body),
    ]);
    const statuses = results.map((r) => r.statusCode);
    for (const s of statuses) assert.ok(s === 201 || s === 409, String(s));
    assert.ok(statuses.includes(201));
    // A retry of a request still running ends by itself: it says when to come back.
    for (const r of results.filter((x) => x.statusCode === 409)) assert.equal(r.headers['retry-after'], '1', r.body);
    const ids = new Set(results.filter((r) => r.statusCode === 201).map((r) => r.json<Product>().id));
    assert.equal(ids.size, 1);
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('replays a batch with its per-item results', async () => {
    const { headers, accountId } = await t.newKey();
    const payload = {
      products: [
        { ...body, sku: 'A' },
        { ...body, sku: 'A' },
        { ...body, currency: 'bad' },
      ],
    };
    const first = await post(headers, 'batch-1', payload, '/api/v1/products/batch');
    assert.equal(first.statusCode, 200, first.body);
    const again = await post(headers, 'batch-1', payload, '/api/v1/products/batch');
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('ignores Idempotency-Key where it does not apply (PUT)', async () => {
    const { headers } = await t.newKey();
    const p = (await post(headers, undefined, body)).json<Product>();
    const a = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/products/${p.id}`,
      headers: { ...headers, 'idempotency-key': 'k' },
      payload: { name: 'one' },
    });
    const b = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/products/${p.id}`,
      headers: { ...headers, 'idempotency-key': 'k' },
      payload: { name: 'two' },
    });
    assert.equal(a.statusCode, 200);
    assert.equal(b.json<Product>().name, 'two');
  });
});
