import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { prng } from '../helpers/prng.js';
import { createProduct } from '../products/support.js';
import { allPositions } from './support.js';
import type { Product } from '../helpers/api-types.js';

/**
 * The stored positions are written by every writer of a product's prices, in its transaction.
 * Concurrent batches over the same products (each series in its own order of products, other
 * competitors), base prices and rates changing meanwhile: every request succeeds (no deadlock
 * between the series locks and the positions' rows, docs/POSITIONS.md "Lock order"), and the
 * rows end as monitoring.position says. On PostgreSQL the requests really run at once.
 */
describe('positions: concurrent writers', () => {
  const t = useTestApp();

  it('batches, base prices and rates at once: all succeed, and the stored rows agree', async () => {
    const rand = prng(2_525);
    const { headers } = await t.newKey();
    const competitors: string[] = [];
    for (let i = 0; i < 6; i++)
      competitors.push((await createCompetitor(t, headers, { name: `C${i}`, website: `https://c${i}.example` })).id);
    const products: Product[] = [];
    for (let i = 0; i < 12; i++)
      products.push(await createProduct(t, headers, { name: `P${i}`, base_price: 50, currency: 'EUR' }));
    const price = () => Math.round((30 + rand() * 40) * 100) / 100;

    const requests: Promise<{ statusCode: number; body: string }>[] = [];
    for (let w = 0; w < 12; w++) {
      // Each batch: all products (shuffled) for one or two competitors and sometimes our own price.
      const order = [...products].sort(() => rand() - 0.5);
      const who = [competitors[w % competitors.length]!, ...(w % 3 === 0 ? [null] : [])];
      const observations = order.flatMap((p) =>
        who.map((c) => ({
          product_id: p.id,
          competitor_id: c,
          price: price(),
          currency: c && rand() < 0.3 ? 'USD' : 'EUR',
        })),
      );
      requests.push(
        t.app.inject({ method: 'POST', url: '/api/v1/prices', headers, payload: { atomic: true, observations } }),
      );
      if (w % 4 === 1) {
        requests.push(
          t.app.inject({
            method: 'PUT',
            url: '/api/v1/exchange-rates/USD/EUR',
            headers,
            payload: { rate: Math.round((0.8 + rand() * 0.3) * 1000) / 1000 },
          }),
        );
      }
      if (w % 4 === 2) {
        requests.push(
          t.app.inject({
            method: 'PATCH',
            url: `/api/v1/products/${order[0]!.id}`,
            headers,
            payload: { base_price: price() },
          }),
        );
      }
    }
    const answers = await Promise.all(requests);
    for (const a of answers) assert.ok(a.statusCode < 300, `${a.statusCode}: ${a.body.slice(0, 300)}`);

    const listed = new Map((await allPositions(t, headers)).map((r) => [r.product_id, r]));
    assert.equal(listed.size, products.length);
    for (const p of products) {
      const pos = (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers })).json<{
        monitoring: {
          position: { own_price: number; rank: number; price_index: number; competitors_compared: number };
        };
      }>().monitoring.position;
      const row = listed.get(p.id)!;
      assert.deepEqual(
        [row.own_price, row.rank, row.price_index, row.of],
        [pos.own_price, pos.rank, pos.price_index, pos.competitors_compared + 1],
        p.name,
      );
    }
  });
});
