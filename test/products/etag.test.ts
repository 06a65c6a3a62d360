import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError } from './support.js';

describe('products: ETag and If-None-Match', () => {
  const t = useTestApp();

  it('tags a product and answers a matching If-None-Match with 304 and no body', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    const url = `/api/v1/products/${p.id}`;
    const first = await t.app.inject({ method: 'GET', url, headers });
    const etag = first.headers.etag as string;
    assert.match(etag, /^(W\/)?"[^"]+"$/);
    const again = await t.app.inject({ method: 'GET', url, headers });
    assert.equal(again.headers.etag, etag, 'stable while unchanged');

    const cached = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': etag } });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    assert.equal(cached.headers.etag, etag);
    assert.ok(cached.headers['x-ratelimit-remaining'] !== undefined, 'still carries rate-limit headers');

    // Also in a list of tags, and in the strong form.
    const listed = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': `"nope", ${etag}` },
    });
    assert.equal(listed.statusCode, 304);
    const strong = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': etag.replace(/^W\//, '') },
    });
    assert.equal(strong.statusCode, 304);
    const star = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': '*' } });
    assert.equal(star.statusCode, 304);
    const other = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': '"something-else"' },
    });
    assert.equal(other.statusCode, 200);
    assert.equal(other.json().id, p.id);
  });

  it('gives a new ETag after a change, and the old one no longer matches', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    const url = `/api/v1/products/${p.id}`;
    const etag = (await t.app.inject({ method: 'GET', url, headers })).headers.etag as string;
    const put = await t.app.inject({
      method: 'PUT',
      url,
      headers: { ...headers, 'if-none-match': etag },
      payload: { base_price: 11 },
    });
    assert.equal(put.statusCode, 200, 'PUT never answers 304');
    assert.equal(put.json().base_price, 11);
    const after = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': etag } });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, etag);
    assert.equal(after.json().base_price, 11);
    // Even an update that sets the same values: updated_at moved, so the representation changed.
    const same = await t.app.inject({
      method: 'PATCH',
      url,
      headers: { ...headers, 'if-none-match': after.headers.etag as string },
      payload: { base_price: 11 },
    });
    assert.equal(same.statusCode, 200);
    const third = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': after.headers.etag as string },
    });
    assert.equal(third.statusCode, 200);
  });

  it('never answers 304 to POST, PUT, PATCH or DELETE, even with If-None-Match: *', async () => {
    const { headers } = await t.newKey();
    const h = { ...headers, 'if-none-match': '*' };
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: h,
      payload: { name: 'n', base_price: 1, currency: 'USD' },
    });
    assert.equal(created.statusCode, 201);
    assert.equal(created.headers.etag, undefined);
    const url = `/api/v1/products/${created.json().id}`;
    assert.equal((await t.app.inject({ method: 'PUT', url, headers: h, payload: { name: 'm' } })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'PATCH', url, headers: h, payload: { name: 'o' } })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: h })).statusCode, 204);
  });

  it('never answers 304 to an error', async () => {
    const { headers } = await t.newKey();
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/products/prod_0000000000missing0000000',
      headers: { ...headers, 'if-none-match': '*' },
    });
    expectError(res, 404, 'not_found');
    assert.equal(res.headers.etag, undefined);
  });

  it('tags lists; a new product changes the tag', async () => {
    const { headers } = await t.newKey();
    await createProduct(t, headers, { name: 'a' });
    const url = '/api/v1/products?sort=name';
    const first = await t.app.inject({ method: 'GET', url, headers });
    const etag = first.headers.etag as string;
    assert.ok(etag);
    const cached = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': etag } });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    await createProduct(t, headers, { name: 'b' });
    const changed = await t.app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': etag } });
    assert.equal(changed.statusCode, 200);
    assert.equal(changed.json().data.length, 2);
    assert.notEqual(changed.headers.etag, etag);
  });

  it('does not share tags between accounts with equal-looking empty lists in a way that leaks data', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    await createProduct(t, a.headers, { name: 'only-a' });
    const etagA = (await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: a.headers })).headers
      .etag as string;
    const resB = await t.app.inject({
      method: 'GET',
      url: '/api/v1/products',
      headers: { ...b.headers, 'if-none-match': etagA },
    });
    assert.equal(resB.statusCode, 200, "B's list differs from A's, so A's tag does not match");
    assert.deepEqual(resB.json().data, []);
  });
});
