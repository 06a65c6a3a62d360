import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, PREFIXES } from '../products/support.js';
import { createCompetitor, createListing, getJson, setListingState } from './support.js';
import type { CompetitorAnalysis } from '../helpers/api-types.js';

describe('competitors: analysis', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`is all zeros and nulls for a competitor without listings under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const c = await createCompetitor(t, headers);
      const a = await getJson<CompetitorAnalysis>(t, headers, `${prefix}/competitors/${c.id}/analysis`);
      assert.deepEqual(a, {
        object: 'competitor_analysis',
        competitor_id: c.id,
        listing_count: 0,
        product_count: 0,
        not_compared: { no_price: 0, out_of_stock: 0, other_currency: 0 },
        overall: {
          compared: 0,
          cheaper: 0,
          same: 0,
          more_expensive: 0,
          cheaper_share: null,
          average_difference_percent: null,
        },
        by_currency: [],
      });
    });
  }

  it('compares latest prices with base_price per currency, never mixing currencies', async () => {
    const { headers } = await t.newKey();
    const c = await createCompetitor(t, headers);
    const other = await createCompetitor(t, headers, { name: 'Other', website: 'https://other.example' });
    const usd1 = await createProduct(t, headers, { name: 'usd1', base_price: 100, currency: 'USD' });
    const usd2 = await createProduct(t, headers, { name: 'usd2', base_price: 50, currency: 'USD' });
    const eur1 = await createProduct(t, headers, { name: 'eur1', base_price: 19.99, currency: 'EUR' });
    const eur2 = await createProduct(t, headers, { name: 'eur2', base_price: 0, currency: 'EUR' });
    const free = await createProduct(t, headers, { name: 'unlisted', base_price: 10, currency: 'USD' });
    const at = (p: { id: string }, path: string, competitor = c.id) =>
      createListing(t, headers, { product_id: p.id, competitor_id: competitor, url: `https://rival.example/${path}` });

    // USD: 90 vs 100 (-10, -10%), 60 vs 50 (+10, +20%), a second page of usd1 at 100 (same).
    await setListingState(t, (await at(usd1, 'u1')).id, { price: 90, currency: 'USD' });
    await setListingState(t, (await at(usd2, 'u2')).id, { price: 60, currency: 'USD' });
    await setListingState(t, (await at(usd1, 'u1-bundle')).id, { price: 100, currency: 'USD' });
    // EUR: 17.99 vs 19.99 (-2, -10.005%), 5 vs 0 (+5; no percent against a zero base).
    await setListingState(t, (await at(eur1, 'e1')).id, { price: 17.99, currency: 'EUR' });
    await setListingState(t, (await at(eur2, 'e2')).id, { price: 5, currency: 'EUR' });
    // Not compared: a price in another currency than the product's, an offer out of stock, no price yet.
    await setListingState(t, (await at(eur1, 'e1-uk')).id, { price: 1, currency: 'GBP' });
    await setListingState(t, (await at(usd2, 'u2-gone')).id, { price: 1, currency: 'USD', in_stock: false });
    await at(eur2, 'e2-new');
    // Listings at other competitors and our own pages do not count.
    await setListingState(t, (await at(usd1, 'elsewhere', other.id)).id, { price: 1, currency: 'USD' });
    await setListingState(
      t,
      (await createListing(t, headers, { product_id: free.id, url: 'https://our.example/unlisted' })).id,
      { price: 1, currency: 'USD' },
    );

    const a = await getJson<CompetitorAnalysis>(t, headers, `/api/v1/competitors/${c.id}/analysis`);
    assert.equal(a.listing_count, 8);
    assert.equal(a.product_count, 4);
    assert.deepEqual(a.not_compared, { no_price: 1, out_of_stock: 1, other_currency: 1 });
    assert.deepEqual(a.by_currency, [
      {
        currency: 'EUR',
        compared: 2,
        cheaper: 1,
        same: 0,
        more_expensive: 1,
        cheaper_share: 0.5,
        average_difference: 1.5,
        average_difference_percent: -10.01,
      },
      {
        currency: 'USD',
        compared: 3,
        cheaper: 1,
        same: 1,
        more_expensive: 1,
        cheaper_share: 0.3333,
        average_difference: 0,
        average_difference_percent: 3.33,
      },
    ]);
    // Overall: percentages over all four listings with a base above 0: (-10 + 20 + 0 - 10.005) / 4.
    assert.deepEqual(a.overall, {
      compared: 5,
      cheaper: 2,
      same: 1,
      more_expensive: 2,
      cheaper_share: 0.4,
      average_difference_percent: 0,
    });
  });

  it("follows the listings' latest prices and the products' current base prices", async () => {
    const { headers } = await t.newKey();
    const c = await createCompetitor(t, headers);
    const p = await createProduct(t, headers, { base_price: 10, currency: 'USD' });
    const l = await createListing(t, headers, {
      product_id: p.id,
      competitor_id: c.id,
      url: 'https://rival.example/p',
    });
    await setListingState(t, l.id, { price: 8, currency: 'USD' });
    const url = `/api/v1/competitors/${c.id}/analysis`;
    assert.equal((await getJson<CompetitorAnalysis>(t, headers, url)).overall.cheaper, 1);
    await t.app.inject({ method: 'PATCH', url: `/api/v1/products/${p.id}`, headers, payload: { base_price: 5 } });
    const after = await getJson<CompetitorAnalysis>(t, headers, url);
    assert.deepEqual(
      [after.overall.cheaper, after.overall.more_expensive, after.by_currency[0]!.average_difference],
      [0, 1, 3],
    );
    // A product now priced in another currency is no longer comparable with a USD price.
    await t.app.inject({ method: 'PATCH', url: `/api/v1/products/${p.id}`, headers, payload: { currency: 'EUR' } });
    const moved = await getJson<CompetitorAnalysis>(t, headers, url);
    assert.equal(moved.overall.compared, 0);
    assert.equal(moved.not_compared.other_currency, 1);
  });
});
