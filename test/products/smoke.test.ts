import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';

describe('products: create and read back', () => {
  const t = useTestApp();

  it('creates a product and reads it back with exact money', async () => {
    const { headers } = await t.newKey();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'Kettle', base_price: 19.99, currency: 'eur' },
    });
    assert.equal(created.statusCode, 201);
    const p = created.json();
    assert.match(p.id, /^prod_/);
    assert.equal(p.currency, 'EUR');
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().base_price, 19.99);
  });
});
