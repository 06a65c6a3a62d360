import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, type Headers, PREFIXES } from '../products/support.js';
import { allPositions, positionsPage, postPrices, summary } from './support.js';

/**
 * GET /positions and /positions/summary (API.md, "Positions"; docs/POSITIONS.md) on a catalogue
 * whose every number is worked out by hand.
 */
describe('positions: the list and the summary', () => {
  const t = useTestApp();

  async function catalogue(headers: Headers) {
    const comp = async (name: string) =>
      (
        await createCompetitor(t, headers, {
          name,
          website: `https://${name.toLowerCase().replace(/\W/g, '')}.example`,
        })
      ).id;
    const a = await comp('Shop A');
    const b = await comp('Shop B');
    const c = await comp('Shop <b>C</b>');
    const make = (name: string, base_price: number, extra: Record<string, unknown> = {}) =>
      createProduct(t, headers, { name, base_price, currency: 'EUR', ...extra });
    const p1 = await make('Kettle', 100, { sku: 'K-1' }); // A 90, B 110: in between
    const p2 = await make('Toaster', 50); // A 60, B 70: cheapest
    const p3 = await make('Blender', 80, { description: 'Fast and loud' }); // A 40, B 60, C 70: dearest
    const p4 = await make('Lonely', 20); // nothing at all: alone
    const p5 = await make('Sold out', 30); // A out of stock: alone
    const p6 = await make('Hammer', 10, { brand: 'Acme', category: 'Tools' }); // C 4: dearest
    await postPrices(t, headers, [
      { product_id: p1.id, competitor_id: a, price: 90 },
      { product_id: p1.id, competitor_id: b, price: 110 },
      { product_id: p2.id, competitor_id: a, price: 60 },
      { product_id: p2.id, competitor_id: b, price: 70 },
      { product_id: p3.id, competitor_id: a, price: 40 },
      { product_id: p3.id, competitor_id: b, price: 60 },
      { product_id: p3.id, competitor_id: c, price: 70 },
      { product_id: p5.id, competitor_id: a, price: 30, in_stock: false },
      { product_id: p6.id, competitor_id: c, price: 4 },
    ]);
    return { a, b, c, p1, p2, p3, p4, p5, p6 };
  }

  it('lists each ranked product with the numbers of API.md, most undercut first, on both prefixes', async () => {
    const { headers } = await t.newKey();
    const { a, c, p1, p2, p3, p6 } = await catalogue(headers);
    for (const prefix of PREFIXES) {
      const page = await positionsPage(t, headers, '', prefix);
      assert.deepEqual(
        page.data.map((r) => r.product_id),
        [p6.id, p3.id, p1.id, p2.id],
        prefix,
      );
      assert.deepEqual(page.pagination, { limit: 20, has_more: false, next_cursor: null });
    }
    const rows = await allPositions(t, headers);
    const [h, bl, k, to] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    assert.ok(!Number.isNaN(Date.parse(k.changed_at)));
    const strip = ({ changed_at: _, ...r }: typeof k) => r;
    assert.deepEqual(strip(k), {
      product_id: p1.id,
      name: 'Kettle',
      sku: 'K-1',
      own_price: 100,
      currency: 'EUR',
      rank: 2,
      of: 3,
      price_index: 100,
      cheapest: { competitor_id: a, name: 'Shop A', price: 90 },
      gap_amount: 10,
      gap_percent: 11.11,
      undercut_by: 1,
    });
    assert.deepEqual(strip(to), {
      product_id: p2.id,
      name: 'Toaster',
      sku: null,
      own_price: 50,
      currency: 'EUR',
      rank: 1,
      of: 3,
      price_index: 76.92,
      cheapest: { competitor_id: a, name: 'Shop A', price: 60 },
      gap_amount: -10,
      gap_percent: -16.67,
      undercut_by: 0,
    });
    assert.deepEqual(
      [bl.rank, bl.of, bl.undercut_by, bl.gap_amount, bl.gap_percent, bl.price_index],
      [4, 4, 3, 40, 100, 141.18],
    );
    assert.deepEqual(
      [h.rank, h.of, h.gap_percent, h.price_index, h.cheapest],
      [2, 2, 150, 250, { competitor_id: c, name: 'Shop <b>C</b>', price: 4 }],
    );
    assert.equal(p6.brand, 'Acme');

    // The same numbers as monitoring.position of each product.
    for (const r of rows) {
      const pos = (await t.app.inject({ method: 'GET', url: `/api/v1/products/${r.product_id}`, headers })).json<{
        monitoring: { position: Record<string, unknown> };
      }>().monitoring.position;
      assert.deepEqual(
        [pos.own_price, pos.rank, pos.price_index, pos.competitors_compared],
        [r.own_price, r.rank, r.price_index, r.of - 1],
      );
    }
  });

  it('filters and sorts as documented', async () => {
    const { headers } = await t.newKey();
    const { b, c, p1, p2, p3, p6 } = await catalogue(headers);
    const ids = async (q: string) => (await allPositions(t, headers, q)).map((r) => r.product_id);
    assert.deepEqual(await ids('undercut=true'), [p6.id, p3.id, p1.id]);
    assert.deepEqual(await ids('undercut=false'), [p2.id]);
    assert.deepEqual(await ids(`competitor_id=${c}`), [p6.id, p3.id]);
    assert.deepEqual(await ids(`competitor_id=${b}`), [p3.id]);
    assert.deepEqual(await ids('rank_min=3'), [p3.id]);
    assert.deepEqual(await ids('rank_max=1'), [p2.id]);
    assert.deepEqual(await ids('rank_min=2&rank_max=2'), [p6.id, p1.id]);
    assert.deepEqual(await ids('gap_percent_min=100'), [p6.id, p3.id]);
    assert.deepEqual(await ids('gap_percent_max=0'), [p2.id]);
    assert.deepEqual(await ids('gap_percent_min=-20&gap_percent_max=11.11'), [p1.id, p2.id]);
    assert.deepEqual(await ids('brand=Acme'), [p6.id]);
    assert.deepEqual(await ids('category=Tools'), [p6.id]);
    assert.deepEqual(await ids('q=LOUD'), [p3.id]);
    assert.deepEqual(await ids('q=k-1'), [p1.id]);
    assert.deepEqual(await ids('brand=acme'), []);

    assert.deepEqual(await ids('sort=gap_percent'), [p2.id, p1.id, p3.id, p6.id]);
    assert.deepEqual(await ids('sort=-gap_amount'), [p3.id, p1.id, p6.id, p2.id]);
    assert.deepEqual(await ids('sort=gap_amount'), [p2.id, p6.id, p1.id, p3.id]);
    assert.deepEqual(await ids('sort=-rank'), [p3.id, ...[p1.id, p6.id].sort().reverse(), p2.id]);
    assert.deepEqual(await ids('sort=price_index'), [p2.id, p1.id, p3.id, p6.id]);
    assert.deepEqual(await ids('sort=name'), [p3.id, p6.id, p1.id, p2.id]);
    assert.deepEqual(await ids('sort=-name'), [p2.id, p1.id, p6.id, p3.id]);
    const byChange = await allPositions(t, headers, 'sort=changed_at');
    assert.deepEqual(
      byChange.map((r) => r.changed_at),
      byChange.map((r) => r.changed_at).sort(),
    );

    // Pages of one row each walk the same rows as one page, for every sort.
    for (const sort of [
      'gap_percent',
      '-gap_percent',
      'gap_amount',
      '-rank',
      'rank',
      'price_index',
      '-price_index',
      'name',
      '-changed_at',
    ]) {
      assert.deepEqual(
        await ids(`sort=${sort}`),
        (await allPositions(t, headers, `sort=${sort}`, 1)).map((r) => r.product_id),
        sort,
      );
    }
  });

  it('counts cheapest, in between, dearest, alone and undercut, with the price-index histogram', async () => {
    const { headers } = await t.newKey();
    await catalogue(headers);
    const s = await summary(t, headers);
    assert.deepEqual(
      { ...s, price_index_histogram: undefined },
      {
        object: 'position_summary',
        products: 6,
        cheapest: 1,
        in_between: 1,
        dearest: 2,
        alone: 2,
        undercut: 3,
        price_index_histogram: undefined,
      },
    );
    assert.deepEqual(s.price_index_histogram, [
      { from: null, to: 80, count: 1 },
      { from: 80, to: 90, count: 0 },
      { from: 90, to: 95, count: 0 },
      { from: 95, to: 100, count: 0 },
      { from: 100, to: 105, count: 1 },
      { from: 105, to: 110, count: 0 },
      { from: 110, to: 120, count: 0 },
      { from: 120, to: null, count: 2 },
    ]);
    const acme = await summary(t, headers, 'brand=Acme');
    assert.deepEqual(
      [acme.products, acme.dearest, acme.undercut, acme.price_index_histogram.at(-1)!.count],
      [1, 1, 1, 1],
    );
    // undercut is the length of ?undercut=true, and each standing the length of ?standing=.
    assert.equal(s.undercut, (await allPositions(t, headers, 'undercut=true')).length);
    for (const standing of ['cheapest', 'in_between', 'dearest'] as const) {
      assert.equal((await allPositions(t, headers, `standing=${standing}`)).length, s[standing], standing);
      assert.equal(
        (await allPositions(t, headers, `standing=${standing}&brand=Acme`)).length,
        acme[standing],
        `${standing} of Acme`,
      );
    }
    const named = async (standing: string) =>
      (await allPositions(t, headers, `standing=${standing}&sort=name`)).map((r) => r.name);
    assert.deepEqual(
      [await named('cheapest'), await named('in_between'), await named('dearest')],
      [['Toaster'], ['Kettle'], ['Blender', 'Hammer']],
    );
  });

  it('answers a bad filter with 422 (or a foreign cursor with 400) in the error shape, never a 500', async () => {
    const { headers } = await t.newKey();
    await catalogue(headers);
    const bad: [string, string][] = [
      ['rank_min=0', 'rank_min'],
      ['rank_max=abc', 'rank_max'],
      ['rank_min=1.5', 'rank_min'],
      ['rank_min=99999999999', 'rank_min'],
      ['rank_min=3&rank_max=2', 'rank_min'],
      ['gap_percent_min=x', 'gap_percent_min'],
      ['gap_percent_max=-101', 'gap_percent_max'],
      ['gap_percent_min=1e300', 'gap_percent_min'],
      ['gap_percent_min=10&gap_percent_max=5', 'gap_percent_min'],
      ['undercut=maybe', 'undercut'],
      ['standing=alone', 'standing'],
      ['standing=Cheapest', 'standing'],
      ['standing=', 'standing'],
      ['standing=cheapest&standing=dearest', 'standing'],
      ['competitor_id=prod_123', 'competitor_id'],
      ["competitor_id=comp_1'--", 'competitor_id'],
      ['sort=-gap', 'sort'],
      ['sort=own_price', 'sort'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['q=', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['brand=%00', 'brand'],
      ['bogus=1', 'bogus'],
    ];
    for (const [query, field] of bad) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/positions?${query}`, headers });
      const body = expectError(res, 422, 'validation_failed');
      assert.ok(fieldsOf(body).includes(field), `${query}: ${res.body}`);
    }
    const summaryBad = await t.app.inject({ method: 'GET', url: '/api/v1/positions/summary?undercut=true', headers });
    expectError(summaryBad, 422, 'validation_failed');
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/positions?cursor=not-a-cursor', headers }),
      400,
      'invalid_request',
    );
    const first = await positionsPage(t, headers, 'limit=1&sort=rank');
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/positions?sort=name&cursor=${first.pagination.next_cursor}`,
        headers,
      }),
      400,
      'invalid_request',
    );
    for (const forged of [
      ['-gap_percent', 'abc', 'prod_x'],
      ['-gap_percent', '1', "prod_1' or 1=1"],
      ['rank', 1.5, 'prod_x'],
      ['changed_at', 'yesterday', 'prod_x'],
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/positions?sort=${forged[0]}&cursor=${cursor}`, headers }),
        400,
        'invalid_request',
      );
    }
    // SQL and HTML in q are text to look for, nothing more.
    for (const q of ["'; drop table product_positions; --", '<script>alert(1)</script>', '%', '_', '\\']) {
      const page = await positionsPage(t, headers, `q=${encodeURIComponent(q)}`);
      assert.deepEqual(page.data, [], q);
    }
    assert.equal((await allPositions(t, headers)).length, 4);
    // Without a key: 401.
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/positions' }), 401, 'unauthorized');
  });

  it("never shows another account's products; another account's competitor matches nothing", async () => {
    const mine = await t.newKey();
    const theirs = await t.newKey();
    const { c } = await catalogue(mine.headers);
    const other = await catalogue(theirs.headers);
    const ownIds = new Set((await allPositions(t, mine.headers)).map((r) => r.product_id));
    const theirIds = (await allPositions(t, theirs.headers)).map((r) => r.product_id);
    assert.equal(ownIds.size, 4);
    assert.equal(theirIds.length, 4);
    assert.ok(theirIds.every((id) => !ownIds.has(id)));
    assert.deepEqual((await positionsPage(t, mine.headers, `competitor_id=${other.c}`)).data, []);
    assert.deepEqual((await positionsPage(t, theirs.headers, `competitor_id=${c}`)).data, []);
    const stranger = await t.newKey();
    assert.deepEqual((await positionsPage(t, stranger.headers)).data, []);
    const s = await summary(t, stranger.headers);
    assert.deepEqual(
      [s.products, s.alone, s.undercut, s.price_index_histogram.reduce((n, b) => n + b.count, 0)],
      [0, 0, 0, 0],
    );
  });
});
