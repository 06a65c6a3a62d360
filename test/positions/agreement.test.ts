import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, setListingState } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { prng } from '../helpers/prng.js';
import { createProduct } from '../products/support.js';
import { allPositions, postPrices, summary } from './support.js';
import type { Product, ProductPosition } from '../helpers/api-types.js';

/**
 * GET /positions reads positions stored as prices arrive (product_positions, kept by triggers);
 * monitoring.position of GET /products/{id} computes them live. Through random price movements in
 * several currencies, rates set, changed and removed, stock lost and back, failing and deleted
 * listings, deleted competitors and our own price changed both ways (an observation, base_price,
 * the currency), after every step both must say the same of every product, and the summary must
 * count what the list shows.
 */
describe('positions: the stored list agrees with monitoring.position, always', () => {
  const t = useTestApp();

  it('through 14 rounds of random changes', async () => {
    const rand = prng(25_001);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const { headers } = await t.newKey();
    const competitors: string[] = [];
    const newCompetitor = async () => {
      const n = competitors.length + 1;
      competitors.push(
        (await createCompetitor(t, headers, { name: `Rival ${n}`, website: `https://rival${n}.example` })).id,
      );
    };
    for (let i = 0; i < 4; i++) await newCompetitor();
    const products: Product[] = [];
    for (let i = 0; i < 8; i++)
      products.push(
        await createProduct(t, headers, {
          name: `Item ${i}`,
          base_price: 20 + i * 5,
          currency: i % 3 === 0 ? 'USD' : 'EUR',
        }),
      );
    const currencies = ['EUR', 'EUR', 'USD', 'GBP', 'JPY'] as const;
    const price = () => Math.round((5 + rand() * 60) * 100) / 100;
    const listings: string[] = [];
    let kinds = new Set<string>();

    const check = async (step: string) => {
      const listed = new Map((await allPositions(t, headers, '', 3)).map((r) => [r.product_id, r]));
      let ranked = 0;
      for (const p of products) {
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
        assert.equal(res.statusCode, 200, res.body);
        const product = res.json<Product & { monitoring: { position: ProductPosition } }>();
        const pos = product.monitoring.position;
        const row = listed.get(p.id);
        if (pos.rank === null) {
          assert.equal(row, undefined, `${step}: ${p.name} has no rank, yet is listed`);
          continue;
        }
        ranked++;
        assert.ok(row, `${step}: ${p.name} ranked ${pos.rank} but not listed`);
        assert.deepEqual(
          [row.own_price, row.currency, row.rank, row.of, row.price_index, row.undercut_by],
          [pos.own_price, product.currency, pos.rank, pos.competitors_compared + 1, pos.price_index, pos.rank - 1],
          `${step}: ${p.name}`,
        );
        assert.ok(competitors.includes(row.cheapest.competitor_id), `${step}: the cheapest is a live competitor`);
        assert.deepEqual(pos.cheapest, row.cheapest, `${step}: ${p.name}: the same cheapest competitor`);
        assert.equal(
          Math.round((row.own_price - row.cheapest.price) * 10_000) / 10_000,
          row.gap_amount,
          `${step}: gap_amount`,
        );
        if (row.cheapest.price > 0) {
          assert.ok(
            Math.abs((row.gap_amount / row.cheapest.price) * 100 - row.gap_percent!) <= 0.005 + 1e-9,
            `${step}: gap_percent`,
          );
        }
        assert.equal(
          row.undercut_by > 0,
          row.gap_amount > 0,
          `${step}: undercut exactly when dearer than the cheapest`,
        );
      }
      assert.equal(listed.size, ranked, `${step}: nothing else is listed`);
      const s = await summary(t, headers);
      assert.equal(s.products, products.length, step);
      assert.equal(s.alone, products.length - ranked, step);
      assert.equal(s.cheapest + s.in_between + s.dearest, ranked, step);
      assert.equal(s.undercut, [...listed.values()].filter((r) => r.undercut_by > 0).length, step);
      // Each standing's list is exactly what the summary counts under its name.
      for (const standing of ['cheapest', 'in_between', 'dearest'] as const) {
        const rows = await allPositions(t, headers, `standing=${standing}`);
        assert.equal(rows.length, s[standing], `${step}: standing=${standing}`);
        if (rows.length > 0) kinds.add(standing);
      }
      assert.equal(
        s.price_index_histogram.reduce((n, b) => n + b.count, 0),
        ranked,
        step,
      );
      if (ranked > 0) kinds.add('ranked');
      if (s.undercut > 0) kinds.add('undercut');
      if (s.alone > 0) kinds.add('alone');
    };

    await check('start');
    for (let round = 1; round <= 14; round++) {
      // Prices: a few series each, competitors' and ours, any currency, any stock.
      const seen = new Set<string>();
      const batch: Parameters<typeof postPrices>[2] = [];
      for (let i = 0; i < 8; i++) {
        const product = pick(products).id;
        const competitor = rand() < 0.2 ? null : pick(competitors);
        const key = `${product}/${competitor}`;
        if (seen.has(key)) continue;
        seen.add(key);
        batch.push({
          product_id: product,
          competitor_id: competitor,
          price: price(),
          currency: pick(currencies),
          in_stock: pick([true, true, true, false, null]),
        });
      }
      await postPrices(t, headers, batch);
      await check(`round ${round}: prices`);

      // Then one other change of an input, or of something that must not matter.
      const what = round % 7;
      const step = `round ${round}: ${['rate removed', 'rate set', 'base_price', 'currency', 'competitor deleted', 'listing failing and deleted', 'rate changed'][what]}`;
      if (what === 0) {
        await t.app.inject({ method: 'DELETE', url: '/api/v1/exchange-rates/EUR/USD', headers });
        await t.app.inject({ method: 'DELETE', url: '/api/v1/exchange-rates/GBP/EUR', headers });
      } else if (what === 1 || what === 6) {
        for (const [base, quote] of [
          ['EUR', 'USD'],
          ['GBP', 'EUR'],
        ]) {
          const res = await t.app.inject({
            method: 'PUT',
            url: `/api/v1/exchange-rates/${base}/${quote}`,
            headers,
            payload: { rate: Math.round((0.6 + rand()) * 10_000) / 10_000 },
          });
          assert.ok(res.statusCode === 200 || res.statusCode === 201, res.body);
        }
      } else if (what === 2) {
        const p = pick(products);
        const res = await t.app.inject({
          method: 'PATCH',
          url: `/api/v1/products/${p.id}`,
          headers,
          payload: { base_price: price() },
        });
        assert.equal(res.statusCode, 200, res.body);
      } else if (what === 3) {
        const p = pick(products);
        const res = await t.app.inject({
          method: 'PATCH',
          url: `/api/v1/products/${p.id}`,
          headers,
          payload: { currency: p.currency === 'EUR' ? 'USD' : 'EUR' },
        });
        assert.equal(res.statusCode, 200, res.body);
        products[products.indexOf(p)] = res.json<Product>();
      } else if (what === 4) {
        const gone = competitors.shift()!;
        assert.equal(
          (await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${gone}`, headers })).statusCode,
          204,
        );
        await newCompetitor();
      } else {
        const l = await createListing(t, headers, {
          product_id: pick(products).id,
          competitor_id: pick(competitors),
          url: `https://rival.example/${round}`,
        });
        listings.push(l.id);
        await setListingState(t, l.id, { status: 'failing', error: 'timeout', failures: 3 });
        await check(`${step} (failing)`);
        assert.equal(
          (await t.app.inject({ method: 'DELETE', url: `/api/v1/listings/${listings.shift()}`, headers })).statusCode,
          204,
        );
      }
      await check(step);
    }
    assert.deepEqual(
      [...kinds].sort(),
      ['alone', 'cheapest', 'dearest', 'in_between', 'ranked', 'undercut'],
      'the rounds went through every kind of position',
    );
    kinds = new Set();
  });
});
