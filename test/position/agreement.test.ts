import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { HOUR, observe, setRate } from '../prices/trends-support.js';
import { createProduct } from '../products/support.js';
import type { Product, ProductTrends } from '../helpers/api-types.js';

const num = (cell: string | undefined) => (cell === undefined || cell === '' ? null : Number(cell));

/**
 * The position has one definition (src/position), read by three endpoints: `monitoring.position`
 * of GET /products/{id}, the comparison of GET /products/{id}/trends and a row of /products.csv.
 * On products that cover each case, all three must say the same.
 */
describe('position: the product, its trends and the catalogue CSV agree', () => {
  const t = useTestApp();

  it('on every case: no series, rates both ways, no rate, out of stock, ties, our own price without a rate', async () => {
    const { headers, accountId } = await t.newKey();
    const shops = await Promise.all(
      ['A', 'B', 'C', 'D'].map(
        async (n) =>
          (await createCompetitor(t, headers, { name: `Shop ${n}`, website: `https://${n.toLowerCase()}.example` })).id,
      ),
    );
    const [a, b, c, d] = shops as [string, string, string, string];
    await setRate(t, accountId, 'EUR', 'GBP', '0.8'); // GBP -> EUR divides
    await setRate(t, accountId, 'USD', 'EUR', '0.9'); // USD -> EUR multiplies
    const make = (name: string, base_price: number, currency = 'EUR') =>
      createProduct(t, headers, { name, base_price, currency });
    const products: Product[] = [];
    const bare = await make('No series', 10);
    products.push(bare);
    const mixed = await make('Rates both ways', 100);
    products.push(mixed);
    const tied = await make('Tied and out of stock', 50);
    products.push(tied);
    const ownNoRate = await make('Our price has no rate', 20);
    products.push(ownNoRate);
    const onlyOwn = await make('Only our own price, in another currency', 30, 'USD');
    products.push(onlyOwn);
    await observe(t, accountId, [
      { product: mixed.id, price: 95, ago: HOUR },
      { product: mixed.id, competitor: a, price: 90, ago: HOUR },
      { product: mixed.id, competitor: b, price: 96, currency: 'GBP', ago: HOUR }, // 120 EUR
      { product: mixed.id, competitor: c, price: 100, currency: 'USD', ago: HOUR }, // 90 EUR: tie with A
      { product: mixed.id, competitor: d, price: 10, currency: 'JPY', ago: HOUR }, // no rate
      { product: tied.id, competitor: a, price: 40, ago: HOUR },
      { product: tied.id, competitor: b, price: 40, ago: HOUR },
      { product: tied.id, competitor: c, price: 10, in_stock: false, ago: HOUR },
      { product: tied.id, competitor: d, price: 60, in_stock: null, ago: HOUR },
      { product: ownNoRate.id, price: 15, currency: 'CHF', ago: HOUR },
      { product: ownNoRate.id, competitor: a, price: 18, ago: HOUR },
      { product: onlyOwn.id, price: 29.99, ago: HOUR }, // EUR: 29.99 / 0.9 USD
    ]);

    const csv = await t.app.inject({ method: 'GET', url: '/api/v1/products.csv', headers });
    assert.equal(csv.statusCode, 200, csv.body);
    const [header, ...rows] = parseCsv(csv.body);
    const col = (row: string[], name: string) => row[header!.indexOf(name)];

    for (const p of products) {
      const product = (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers })).json<Product>();
      const trends = (
        await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}/trends`, headers })
      ).json<ProductTrends>();
      const row = rows.find((r) => r[0] === p.id);
      assert.ok(row, `${p.name} is in the CSV`);
      const pos = product.monitoring.position;
      const k = trends.comparison;
      const from = {
        product: [
          pos.own_price,
          pos.own_price_source,
          pos.competitors_compared,
          pos.competitors_left_out,
          pos.rank,
          pos.price_index,
        ],
        trends: [
          trends.own.price_in_product_currency,
          trends.own.source,
          k.compared,
          k.left_out.out_of_stock + k.left_out.no_rate,
          k.rank,
          k.price_index,
        ],
        csv: [
          num(col(row, 'own_price')),
          col(row, 'own_price_source'),
          num(col(row, 'competitors_compared')),
          num(col(row, 'competitors_left_out')),
          num(col(row, 'rank')),
          num(col(row, 'price_index')),
        ],
      };
      assert.deepEqual(from.trends, from.product, `${p.name}: trends and product`);
      assert.deepEqual(from.csv, from.product, `${p.name}: csv and product`);
      assert.deepEqual(
        [
          num(col(row, 'lowest_competitor_price')),
          num(col(row, 'average_competitor_price')),
          num(col(row, 'highest_competitor_price')),
          col(row, 'cheapest_competitor_id') || null,
        ],
        [k.lowest, k.average, k.highest, k.cheapest?.competitor_id ?? null],
        `${p.name}: csv and trends`,
      );
      // The cheapest competitor, named the same by all three.
      const named = k.cheapest
        ? {
            competitor_id: k.cheapest.competitor_id,
            name: k.cheapest.competitor_name,
            price: k.cheapest.price_in_product_currency,
          }
        : null;
      assert.deepEqual(pos.cheapest, named, `${p.name}: the cheapest, product and trends`);
      assert.deepEqual(
        [col(row, 'cheapest_competitor_id') || null, col(row, 'cheapest_competitor_name') || null],
        [pos.cheapest?.competitor_id ?? null, pos.cheapest?.name ?? null],
        `${p.name}: the cheapest, csv and product`,
      );
    }

    // The cases are what they claim to be, so the agreement above is not agreement on nothing.
    const position = async (p: Product) =>
      (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers })).json<Product>().monitoring
        .position;
    assert.deepEqual(await position(bare), {
      own_price: 10,
      own_price_source: 'base_price',
      competitors_compared: 0,
      competitors_left_out: 0,
      rank: null,
      price_index: null,
      cheapest: null,
    });
    // Ties go to the smaller id.
    const first = (...ids: string[]) => {
      const id = ids.sort()[0]!;
      return { competitor_id: id, name: `Shop ${'ABCD'[shops.indexOf(id)]}` };
    };
    assert.deepEqual(await position(mixed), {
      own_price: 95,
      own_price_source: 'observation',
      competitors_compared: 3,
      competitors_left_out: 1,
      rank: 3,
      price_index: 95,
      cheapest: { ...first(a, c), price: 90 },
    });
    assert.deepEqual(await position(tied), {
      own_price: 50,
      own_price_source: 'base_price',
      competitors_compared: 3,
      competitors_left_out: 1,
      rank: 3,
      price_index: 107.14,
      cheapest: { ...first(a, b), price: 40 },
    });
    assert.deepEqual(await position(ownNoRate), {
      own_price: null,
      own_price_source: 'observation',
      competitors_compared: 1,
      competitors_left_out: 0,
      rank: null,
      price_index: null,
      cheapest: { competitor_id: a, name: 'Shop A', price: 18 },
    });
    assert.deepEqual(await position(onlyOwn), {
      own_price: 33.3222,
      own_price_source: 'observation',
      competitors_compared: 0,
      competitors_left_out: 0,
      rank: null,
      price_index: null,
      cheapest: null,
    });
  });
});
