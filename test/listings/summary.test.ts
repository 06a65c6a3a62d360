import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson, type Page, setListingState } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct } from '../products/support.js';
import type { Product } from '../helpers/api-types.js';

/** Runs `fn` and returns the statements it sent to the database that touch products or listings. */
async function statementsOf(t: TestApp, fn: () => Promise<unknown>): Promise<string[]> {
  const db = t.rt.db;
  const own = Object.getOwnPropertyDescriptor(db, 'query');
  const original = db.query.bind(db);
  const seen: string[] = [];
  db.query = ((sql: string, params?: readonly unknown[]) => {
    if (/\b(products|listings)\b/.test(sql)) seen.push(sql);
    return original(sql, params);
  }) as typeof db.query;
  try {
    await fn();
  } finally {
    if (own) Object.defineProperty(db, 'query', own);
    else delete (db as { query?: unknown }).query;
  }
  return seen;
}

describe('products: monitoring summary', () => {
  const t = useTestApp();

  it("summarises listings: count, lowest enabled in-stock competitor price in the product's currency, last check", async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers, { base_price: 100, currency: 'EUR', url: 'https://our.example/p' });
    const empty = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    assert.deepEqual(
      { ...empty.monitoring, position: undefined },
      { listing_count: 0, lowest_competitor_price: null, last_checked_at: null, position: undefined },
    );

    const c1 = await createCompetitor(t, headers, { name: 'c1', website: 'https://c1.example' });
    const c2 = await createCompetitor(t, headers, { name: 'c2', website: 'https://c2.example' });
    const mk = (competitor: string | null, path: string, extra: object = {}) =>
      createListing(t, headers, {
        product_id: p.id,
        ...(competitor ? { competitor_id: competitor } : {}),
        url: `https://x.example/${path}`,
        ...extra,
      });
    const own = await mk(null, 'own');
    const a = await mk(c1.id, 'a');
    const b = await mk(c2.id, 'b');
    const usd = await mk(c2.id, 'usd');
    const gone = await mk(c1.id, 'gone');
    const off = await mk(c1.id, 'off', { enabled: false });
    await mk(c2.id, 'never-checked');
    const t1 = new Date('2026-04-01T08:00:00.000Z');
    const t2 = new Date('2026-04-02T08:00:00.000Z');
    const t3 = new Date('2026-04-03T08:00:00.000Z');
    await setListingState(t, own.id, { price: 50, currency: 'EUR', checked_at: t1 }); // ours: never the competitor price
    await setListingState(t, a.id, { price: 89.9, currency: 'EUR', checked_at: t1 });
    await setListingState(t, b.id, { price: 79.5, currency: 'EUR', in_stock: true, checked_at: t2 });
    await setListingState(t, usd.id, { price: 10, currency: 'USD', checked_at: t1 }); // another currency: not compared
    await setListingState(t, gone.id, { price: 60, currency: 'EUR', in_stock: false, checked_at: t1 }); // out of stock
    await setListingState(t, off.id, { price: 55, currency: 'EUR', checked_at: t3 }); // disabled: not current

    const got = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    assert.deepEqual(
      { ...got.monitoring, position: undefined },
      {
        position: undefined, // from price observations, not listings: test/products/position.test.ts
        listing_count: 7,
        lowest_competitor_price: {
          price: 79.5,
          currency: 'EUR',
          competitor_id: c2.id,
          listing_id: b.id,
          observed_at: t2.toISOString(),
        },
        last_checked_at: t3.toISOString(),
      },
    );
    // The same summary in lists and in the answer of an update.
    const listed = (await getJson<Page<Product>>(t, headers, '/api/v1/products')).data.find((x) => x.id === p.id)!;
    assert.deepEqual(listed.monitoring, got.monitoring);
    const renamed = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { name: 'renamed' },
    });
    assert.deepEqual(renamed.json<Product>().monitoring, got.monitoring);
    // A product now priced in USD compares with the USD listing only.
    const moved = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { currency: 'usd' },
    });
    assert.deepEqual(moved.json<Product>().monitoring.lowest_competitor_price, {
      price: 10,
      currency: 'USD',
      competitor_id: c2.id,
      listing_id: usd.id,
      observed_at: t1.toISOString(),
    });
    // Deleting the competitor takes its listings out of the summary.
    await t.app.inject({ method: 'DELETE', url: `/api/v1/competitors/${c2.id}`, headers });
    const after = await getJson<Product>(t, headers, `/api/v1/products/${p.id}`);
    assert.deepEqual([after.monitoring.listing_count, after.monitoring.lowest_competitor_price], [4, null]);
  });

  it('breaks equal lowest prices by listing id, so the answer is stable', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers, { currency: 'EUR' });
    const c = await createCompetitor(t, headers);
    const ls = [];
    for (let i = 0; i < 3; i++)
      ls.push(
        await createListing(t, headers, { product_id: p.id, competitor_id: c.id, url: `https://rival.example/${i}` }),
      );
    for (const l of ls) await setListingState(t, l.id, { price: 5, currency: 'EUR' });
    const lowest = (await getJson<Product>(t, headers, `/api/v1/products/${p.id}`)).monitoring.lowest_competitor_price!;
    assert.equal(lowest.listing_id, ls.map((l) => l.id).sort()[0]);
  });

  it('costs one statement for a product and one for a page of products, however many listings they have', async () => {
    const { headers } = await t.newKey();
    const c = await createCompetitor(t, headers);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const p = await createProduct(t, headers, { name: `p${i}`, currency: 'EUR' });
      ids.push(p.id);
      for (let j = 0; j < 3; j++) {
        const l = await createListing(t, headers, {
          product_id: p.id,
          competitor_id: c.id,
          url: `https://rival.example/${i}/${j}`,
        });
        await setListingState(t, l.id, { price: 10 + j, currency: 'EUR' });
      }
    }
    // Warm the key cache first, so only the product statements are left to count.
    await getJson(t, headers, `/api/v1/products/${ids[0]}`);
    let body: Product | undefined;
    const one = await statementsOf(t, async () => {
      body = await getJson<Product>(t, headers, `/api/v1/products/${ids[0]}`);
    });
    assert.equal(one.length, 1, one.join('\n---\n'));
    assert.equal(body!.monitoring.listing_count, 3);
    let page: Page<Product> | undefined;
    const list = await statementsOf(t, async () => {
      page = await getJson<Page<Product>>(t, headers, '/api/v1/products?limit=100');
    });
    assert.equal(list.length, 1, list.join('\n---\n'));
    assert.equal(page!.data.length, 5);
    assert.ok(
      page!.data.every((p) => p.monitoring.listing_count === 3 && p.monitoring.lowest_competitor_price?.price === 10),
    );
  });
});
