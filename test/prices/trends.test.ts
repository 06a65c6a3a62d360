import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, getJson } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, PREFIXES } from '../products/support.js';
import { DAY, HOUR, observe, setRate } from './trends-support.js';
import type { ProductTrends } from '../helpers/api-types.js';

describe('prices: trends and position', () => {
  const t = useTestApp();

  for (const prefix of PREFIXES) {
    it(`answers a product without prices with its base_price and an empty comparison under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const p = await createProduct(t, headers, { base_price: 19.99, currency: 'eur' });
      const tr = await getJson<ProductTrends>(t, headers, `${prefix}/products/${p.id}/trends`);
      assert.equal(tr.object, 'product_trends');
      assert.equal(tr.product_id, p.id);
      assert.equal(tr.currency, 'EUR');
      assert.ok(Math.abs(Date.parse(tr.as_of) - Date.now()) < 60_000);
      assert.deepEqual(tr.own, {
        source: 'base_price',
        price: 19.99,
        currency: 'EUR',
        price_in_product_currency: 19.99,
        in_stock: null,
        observed_at: null,
        listing_id: null,
        price_since: null,
        changes: null,
        stats: null,
      });
      assert.deepEqual(tr.comparison, {
        compared: 0,
        left_out: { out_of_stock: 0, no_rate: 0 },
        lowest: null,
        average: null,
        highest: null,
        rank: null,
        price_index: null,
        cheapest: null,
        stock: { in_stock: 0, out_of_stock: 0, unknown: 0 },
      });
      assert.deepEqual(tr.competitors, []);
    });
  }

  it("compares the latest prices in the product's currency: rates (direct and inverse), no rate, stock, ties", async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 100, currency: 'EUR' });
    const comp = async (name: string) =>
      (await createCompetitor(t, headers, { name, website: `https://${name}.example` })).id;
    const [a, b, c, d, e, f] = [
      await comp('a'),
      await comp('b'),
      await comp('c'),
      await comp('d'),
      await comp('e'),
      await comp('f'),
    ];
    await setRate(t, accountId, 'USD', 'EUR', '0.9'); // direct: 100 USD = 90 EUR
    await setRate(t, accountId, 'EUR', 'GBP', '0.8'); // only the opposite pair: 120 GBP = 120 / 0.8 = 150 EUR
    await setRate(t, accountId, 'EUR', 'USD', '5'); // the opposite of a direct pair is never used for USD -> EUR
    await observe(t, accountId, [
      { product: p.id, price: 95, ago: HOUR }, // ours
      { product: p.id, competitor: a, price: 90, ago: HOUR },
      { product: p.id, competitor: b, price: 100, currency: 'USD', ago: HOUR },
      { product: p.id, competitor: c, price: 120, currency: 'GBP', ago: HOUR },
      { product: p.id, competitor: d, price: 50, in_stock: false, ago: HOUR }, // out of stock: left out
      { product: p.id, competitor: e, price: 10, currency: 'JPY', ago: HOUR }, // no rate: left out
      { product: p.id, competitor: f, price: 99.99, in_stock: null, ago: HOUR }, // unknown stock: compared
    ]);
    const tr = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    assert.equal(tr.own.source, 'observation');
    assert.equal(tr.own.price, 95);
    // Compared: 90, 90, 150, 99.99. Average 429.99 / 4; we are third (two are strictly cheaper).
    const cheapest = [a, b].sort()[0]!;
    assert.deepEqual(
      { ...tr.comparison, cheapest: { ...tr.comparison.cheapest, since: undefined } },
      {
        compared: 4,
        left_out: { out_of_stock: 1, no_rate: 1 },
        lowest: 90,
        average: 107.4975,
        highest: 150,
        rank: 3,
        price_index: 88.37, // 95 / 107.4975 x 100 = 88.3741...
        cheapest: {
          competitor_id: cheapest,
          competitor_name: cheapest === a ? 'a' : 'b',
          price_in_product_currency: 90,
          tied: 1,
          since: undefined,
        },
        stock: { in_stock: 4, out_of_stock: 1, unknown: 1 },
      },
    );
    const byId = new Map(tr.competitors.map((x) => [x.competitor_id, x]));
    assert.deepEqual(
      tr.competitors.map((x) => x.competitor_id),
      [a, b, c, d, e, f].sort(),
    );
    assert.deepEqual(
      [a, b, c, d, e, f].map((id) => [
        byId.get(id)!.price,
        byId.get(id)!.currency,
        byId.get(id)!.price_in_product_currency,
        byId.get(id)!.compared,
      ]),
      [
        [90, 'EUR', 90, 'yes'],
        [100, 'USD', 90, 'yes'],
        [120, 'GBP', 150, 'yes'],
        [50, 'EUR', 50, 'out_of_stock'],
        [10, 'JPY', null, 'no_rate'],
        [99.99, 'EUR', 99.99, 'yes'],
      ],
    );
    assert.equal(byId.get(f)!.in_stock, null);
    assert.equal(byId.get(a)!.competitor_name, 'a');

    // A tie with the cheapest shares first place; a price of ours without a rate ranks nowhere.
    await observe(t, accountId, [{ product: p.id, price: 90, ago: 0 }]);
    const tied = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    assert.deepEqual([tied.comparison.rank, tied.comparison.price_index], [1, 83.72]);
    await observe(t, accountId, [{ product: p.id, price: 5000, currency: 'JPY', ago: -1 }]);
    const unranked = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    assert.deepEqual(
      [unranked.own.price, unranked.own.currency, unranked.own.price_in_product_currency],
      [5000, 'JPY', null],
    );
    assert.deepEqual(
      [unranked.comparison.rank, unranked.comparison.price_index, unranked.comparison.compared],
      [null, null, 4],
    );
  });

  it('reports the change over 24 h, 7 d and 30 d from the price held at each instant', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 1, currency: 'EUR' });
    const c = (await createCompetitor(t, headers)).id;
    const now = Date.now();
    await observe(
      t,
      accountId,
      [
        { product: p.id, price: 100, ago: 40 * DAY },
        { product: p.id, price: 80, ago: 10 * DAY },
        { product: p.id, price: 84, ago: 2 * HOUR },
        // A competitor seen for 8 days only, that changed currency 2 days ago.
        { product: p.id, competitor: c, price: 10, currency: 'USD', ago: 8 * DAY },
        { product: p.id, competitor: c, price: 12.5, ago: 2 * DAY },
      ],
      now,
    );
    const tr = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    assert.deepEqual(tr.own.changes, {
      '24h': { from: 80, from_currency: 'EUR', amount: 4, percent: 5 },
      '7d': { from: 80, from_currency: 'EUR', amount: 4, percent: 5 },
      '30d': { from: 100, from_currency: 'EUR', amount: -16, percent: -16 },
    });
    assert.equal(tr.own.price_since, new Date(now - 2 * HOUR).toISOString());
    assert.deepEqual(tr.competitors[0]!.changes, {
      '24h': { from: 12.5, from_currency: 'EUR', amount: 0, percent: 0 },
      '7d': { from: 10, from_currency: 'USD', amount: null, percent: null }, // never mixed
      '30d': { from: null, from_currency: null, amount: null, percent: null }, // not seen yet
    });
  });

  it('computes Keepa-style statistics on a hand-made series, out-of-stock time included', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 60, currency: 'EUR' });
    const c = (await createCompetitor(t, headers)).id;
    const other = (await createCompetitor(t, headers, { name: 'Other', website: 'https://other.example' })).id;
    const now = Date.now();
    const at = await observe(
      t,
      accountId,
      [
        { product: p.id, competitor: c, price: 50, ago: 200 * DAY },
        { product: p.id, competitor: c, price: 70, ago: 100 * DAY },
        { product: p.id, competitor: c, price: 30, in_stock: false, ago: 60 * DAY }, // cheap but nobody can buy it
        { product: p.id, competitor: c, price: 65, ago: 45 * DAY },
        { product: p.id, competitor: c, price: 40, in_stock: null, ago: 20 * DAY },
        { product: p.id, competitor: c, price: 55, ago: 5 * DAY },
        { product: p.id, competitor: other, price: 100, ago: 50 * DAY },
        { product: p.id, competitor: other, price: 90, ago: DAY },
      ],
      now,
    );
    const tr = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    const s = tr.competitors.find((x) => x.competitor_id === c)!.stats!;
    const when = (i: number) => at[i]!.toISOString();
    assert.equal(s.currency, 'EUR');
    assert.deepEqual(s.lowest_ever, { price: 40, at: when(4) });
    assert.deepEqual(s.highest_ever, { price: 70, at: when(1) });
    assert.deepEqual(s.ranges, {
      // 65 for 10 d, 40 for 15 d, 55 for 5 d; the 65 set 45 days ago still held when the range began.
      '30d': {
        average: 50.8333,
        lowest: { price: 40, at: when(4) },
        highest: { price: 65, at: when(3) },
        current_is_lowest: false,
        observations: 2,
        out_of_stock_share: 0,
      },
      // 70 for 30 d, out of stock 15 d, 65 for 25 d, 40 for 15 d, 55 for 5 d: 4600 / 75; stock known 75 d, 15 out.
      '90d': {
        average: 61.3333,
        lowest: { price: 40, at: when(4) },
        highest: { price: 70, at: when(1) },
        current_is_lowest: false,
        observations: 4,
        out_of_stock_share: 0.2,
      },
      // 50 for 80 d more: 9300 / 165; out of stock 15 of 165 d.
      '180d': {
        average: 56.3636,
        lowest: { price: 40, at: when(4) },
        highest: { price: 70, at: when(1) },
        current_is_lowest: false,
        observations: 5,
        out_of_stock_share: 0.0909,
      },
      // The series began 200 days ago: 10300 / 185.
      '365d': {
        average: 55.6757,
        lowest: { price: 40, at: when(4) },
        highest: { price: 70, at: when(1) },
        current_is_lowest: false,
        observations: 6,
        out_of_stock_share: 0.0811,
      },
    });
    const o = tr.competitors.find((x) => x.competitor_id === other)!.stats!;
    assert.deepEqual(
      [o.ranges['30d'].current_is_lowest, o.ranges['30d'].lowest, o.ranges['90d'].current_is_lowest],
      [true, { price: 90, at: when(7) }, true],
    );
    assert.equal(o.ranges['30d'].average, 99.6667); // 100 for 29 d, 90 for 1 d
  });

  it('says since when the cheapest competitor has been the cheapest', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 85, currency: 'EUR' });
    const x = (await createCompetitor(t, headers, { name: 'x', website: 'https://x.example' })).id;
    const y = (await createCompetitor(t, headers, { name: 'y', website: 'https://y.example' })).id;
    const at = await observe(t, accountId, [
      { product: p.id, competitor: x, price: 100, ago: 10 * DAY },
      { product: p.id, competitor: x, price: 80, ago: 3 * DAY },
      { product: p.id, competitor: y, price: 70, ago: 10 * DAY },
      { product: p.id, competitor: y, price: 90, ago: 2 * DAY },
    ]);
    const tr = await getJson<ProductTrends>(t, headers, `/api/v1/products/${p.id}/trends`);
    // x charges 80 since 3 days ago, but y charged less (70) until 2 days ago.
    assert.deepEqual(tr.comparison.cheapest, {
      competitor_id: x,
      competitor_name: 'x',
      price_in_product_currency: 80,
      tied: 0,
      since: at[3]!.toISOString(),
    });
    assert.deepEqual([tr.comparison.rank, tr.comparison.price_index], [2, 100]);
  });

  it("answers 404 for another account's product, a missing one and a malformed id, 422 for unknown parameters", async () => {
    const owner = await t.newKey();
    const other = await t.newKey();
    const p = await createProduct(t, owner.headers);
    await observe(t, owner.accountId, [{ product: p.id, price: 5, ago: HOUR }]);
    const get = (url: string, headers = other.headers) => t.app.inject({ method: 'GET', url, headers });
    expectError(await get(`/api/v1/products/${p.id}/trends`), 404, 'not_found');
    expectError(await get('/api/v1/products/prod_0000000000000000000000000000/trends'), 404, 'not_found');
    for (const bad of [
      'not-an-id',
      'prod_%27%3B%20drop%20table%20products',
      'comp_abc',
      `${p.id}%00`,
      'prod_%F0%9F%98%80',
    ]) {
      // A malformed id in the path is simply not found (src/http/error-handler.ts), as for GET /products/{id}.
      expectError(await get(`/api/v1/products/${bad}/trends`, owner.headers), 404, 'not_found');
    }
    const unknown = expectError(
      await get(`/api/v1/products/${p.id}/trends?from=2026-01-01`, owner.headers),
      422,
      'validation_failed',
    );
    assert.deepEqual(unknown.details, [{ field: 'from', message: 'is not a known field' }]);
    expectError(await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}/trends` }), 401, 'unauthorized');
  });
});
