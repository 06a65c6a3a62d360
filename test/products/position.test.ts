import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, getJson, type Page } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { HOUR, observe, setRate } from '../prices/trends-support.js';
import { createProduct } from './support.js';
import type { Product } from '../helpers/api-types.js';

describe('products: monitoring.position', () => {
  const t = useTestApp();

  it("ranks our latest price among the competitors' latest, converted with the account's rates", async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 100, currency: 'EUR' });
    const comp = async (name: string) =>
      (await createCompetitor(t, headers, { name, website: `https://${name}.example` })).id;
    const [a, b, c, d] = [await comp('a'), await comp('b'), await comp('c'), await comp('d')];
    await setRate(t, accountId, 'USD', 'EUR', '0.9');
    await observe(t, accountId, [
      { product: p.id, price: 95, ago: HOUR },
      { product: p.id, competitor: a, price: 90, ago: HOUR },
      { product: p.id, competitor: b, price: 100, currency: 'USD', ago: HOUR }, // 90 EUR
      { product: p.id, competitor: c, price: 50, in_stock: false, ago: HOUR }, // left out: out of stock
      { product: p.id, competitor: d, price: 10, currency: 'JPY', ago: HOUR }, // left out: no rate
    ]);
    const got = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    // 95 / 90 x 100; two competitors are cheaper than us, tied at 90 EUR: the cheapest is the smaller id.
    const tied = a < b ? { competitor_id: a, name: 'a' } : { competitor_id: b, name: 'b' };
    const expected = {
      own_price: 95,
      own_price_source: 'observation',
      competitors_compared: 2,
      competitors_left_out: 2,
      rank: 3,
      price_index: 105.56,
      cheapest: { ...tied, price: 90 },
    };
    assert.deepEqual(got.monitoring.position, expected);
    const listed = (await getJson<Page<Product>>(t, headers, '/api/v1/products')).data.find((x) => x.id === p.id)!;
    assert.deepEqual(listed.monitoring.position, expected);
    // Priced in USD now: our 95 EUR is 95 / 0.9 = 105.5556 USD (the inverse of the only rate), a's 90 EUR is 100 USD.
    const moved = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { currency: 'USD' },
    });
    assert.deepEqual(moved.json<Product>().monitoring.position, {
      ...expected,
      own_price: 105.5556,
      price_index: 105.56,
      cheapest: { ...tied, price: 100 },
    });
    // Our price in a currency without a rate cannot be ranked; it is still reported as unknown, never mixed.
    await observe(t, accountId, [{ product: p.id, price: 1000, currency: 'JPY', ago: 0 }]);
    const unranked = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    // The competitors are still compared among themselves: the cheapest stays named.
    assert.deepEqual(unranked.monitoring.position, {
      ...expected,
      own_price: null,
      rank: null,
      price_index: null,
      cheapest: { ...tied, price: 100 },
    });
  });

  it('uses base_price while we have no observed price, and shares first place on a tie', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 90, currency: 'EUR' });
    const x = (await createCompetitor(t, headers)).id;
    const y = (await createCompetitor(t, headers, { name: 'y', website: 'https://y.example' })).id;
    await observe(t, accountId, [
      { product: p.id, competitor: x, price: 90, ago: HOUR },
      { product: p.id, competitor: y, price: 110, in_stock: null, ago: HOUR },
    ]);
    const got = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    assert.deepEqual(got.monitoring.position, {
      own_price: 90,
      own_price_source: 'base_price',
      competitors_compared: 2,
      competitors_left_out: 0,
      rank: 1,
      price_index: 90, // 90 / 100 x 100
      cheapest: { competitor_id: x, name: 'Rival', price: 90 },
    });
  });
});
