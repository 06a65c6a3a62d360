import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { EXPORT_PAGE_ROWS } from '../../src/prices/history/service.js';
import { CATALOGUE_WALK_ROWS } from '../../src/products/service.js';
import { useTestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { competitor, type Headers, insertObservations, post } from './history-support.js';

/**
 * GET /api/v1/prices.csv: the raw price history of every product in one streamed request (what
 * `pricehound export prices` reads), through the real HTTP pipeline.
 */

const HEADER =
  'product_id,sku,observed_at,competitor_id,competitor_name,listing_id,price,currency,in_stock,source,samples,price_sum,id';

describe("GET /prices.csv: every product's observations in one request", () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let kettle: string;
  let toaster: string;
  let quiet: string;
  let rival: string;

  before(async () => {
    ({ headers, accountId } = await t.newKey('free'));
    kettle = (
      await post(t, headers, '/api/v1/products', {
        name: 'Kettle',
        sku: '=K1',
        base_price: 20,
        currency: 'EUR',
        category: 'kitchen',
      })
    ).id;
    toaster = (
      await post(t, headers, '/api/v1/products', {
        name: 'Toaster',
        sku: 'T1',
        base_price: 30,
        currency: 'EUR',
        category: 'kitchen',
      })
    ).id;
    quiet = (
      await post(t, headers, '/api/v1/products', { name: 'Quiet', base_price: 5, currency: 'EUR', category: 'garden' })
    ).id;
    rival = await competitor(t, headers, 'Rival, "the" shop');
    await insertObservations(t, accountId, kettle, [
      { price: '19.5', at: '2026-03-01T10:00:00Z', inStock: true },
      { competitor: rival, price: '18', at: '2026-03-01T09:00:00Z', inStock: false },
      { price: '17', at: '2025-01-01T00:00:00Z' }, // outside the ranges asked below
    ]);
    await insertObservations(t, accountId, toaster, [
      { competitor: rival, price: '29.99', at: '2026-03-02T10:00:00Z' },
    ]);
    // Another account's product and prices never show.
    const other = await t.newKey('free');
    const theirs = (
      await post(t, other.headers, '/api/v1/products', { name: 'Theirs', base_price: 1, currency: 'EUR' })
    ).id;
    await insertObservations(t, other.accountId, theirs, [{ price: '1', at: '2026-03-01T10:00:00Z' }]);
  });

  const csv = (query: string, h = headers) =>
    t.app.inject({ method: 'GET', url: `/api/v1/prices.csv?${query}`, headers: h });
  const RANGE = 'from=2026-03-01T00:00:00Z&to=2026-03-05T00:00:00Z';

  it("writes every product's observations, product after product, each oldest first, with its id and SKU", async () => {
    const res = await csv(`${RANGE}&sort=name`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="prices.csv"');
    assert.equal(res.headers.etag, undefined);
    const rows = parseCsv(res.body);
    assert.equal(rows[0]!.join(','), HEADER);
    assert.deepEqual(
      rows.slice(1).map((r) => [r[0], r[1], r[2], r[3], r[4], r[6], r[8]]),
      [
        [kettle, "'=K1", '2026-03-01T09:00:00.000Z', rival, 'Rival, "the" shop', '18', 'false'],
        [kettle, "'=K1", '2026-03-01T10:00:00.000Z', '', '', '19.5', 'true'],
        [toaster, 'T1', '2026-03-02T10:00:00.000Z', rival, 'Rival, "the" shop', '29.99', ''],
      ],
    );
    assert.ok(rows.slice(1).every((r) => /^obs_/.test(r[12]!)));
    assert.ok(!res.body.includes(quiet), 'a product with nothing in the range has no row');
  });

  it('counts as one request against the hourly limit, whatever the catalogue', async () => {
    const before = Number((await csv(RANGE)).headers['x-ratelimit-remaining']);
    const after = Number((await csv(RANGE)).headers['x-ratelimit-remaining']);
    assert.equal(before - after, 1);
  });

  it('keeps the series and products asked for: competitor_id (own), and the filters of GET /products', async () => {
    const own = parseCsv((await csv(`${RANGE}&competitor_id=own`)).body).slice(1);
    assert.deepEqual(
      own.map((r) => [r[0], r[6]]),
      [[kettle, '19.5']],
    );
    const theirs = parseCsv((await csv(`${RANGE}&competitor_id=${rival}&sku=T1`)).body).slice(1);
    assert.deepEqual(
      theirs.map((r) => [r[0], r[6]]),
      [[toaster, '29.99']],
    );
    const garden = await csv(`${RANGE}&category=garden`);
    assert.equal(garden.body, `${HEADER}\r\n`);
    // Another account's competitor is just not one of ours: nothing matches.
    const foreign = await csv(`${RANGE}&competitor_id=comp_00000000000000000000000000`);
    assert.equal(foreign.statusCode, 200);
    assert.equal(foreign.body, `${HEADER}\r\n`);
  });

  it('defaults to the last 30 days', async () => {
    const recent = new Date(Date.now() - 3_600_000).toISOString();
    await insertObservations(t, accountId, quiet, [{ price: '4', at: recent }]);
    const rows = parseCsv((await csv('')).body).slice(1);
    assert.deepEqual(
      rows.map((r) => [r[0], r[2]]),
      [[quiet, recent]],
    );
  });

  it('refuses what it cannot answer with a 422 naming the parameter, never a 500', async () => {
    const cases: [string, string][] = [
      ['from=2026-03-05T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'],
      ['from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'], // more than 366 days
      ['from=yesterday', 'from'],
      ['to=9999-01-01T00:00:00Z', 'to'],
      ['competitor_id=comp_x;drop', 'competitor_id'],
      [`competitor_id=${Array.from({ length: 51 }, () => 'own').join(',')}`, 'competitor_id'],
      ['min_price=10&max_price=5', 'min_price'],
      [`q=${'x'.repeat(300)}`, 'q'],
      ['sort=price', 'sort'],
      ['interval=day', 'interval'],
      ['limit=5', 'limit'],
    ];
    for (const [query, field] of cases) {
      const res = await csv(query);
      assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
      const body = res.json<{ code: string; details: { field: string }[] }>();
      assert.equal(body.code, 'validation_failed');
      assert.ok(
        body.details.some((d) => d.field.startsWith(field)),
        `${query}: ${res.body}`,
      );
    }
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/prices.csv' })).statusCode, 401);
  });

  it(`streams more than a page of products (${CATALOGUE_WALK_ROWS}) and of one product's observations (${EXPORT_PAGE_ROWS}), every row once`, async () => {
    const { headers: h, accountId: a } = await t.newKey('business');
    const products = Array.from({ length: CATALOGUE_WALK_ROWS + 3 }, (_, i) => ({
      name: `P${i}`,
      sku: `P-${String(i).padStart(4, '0')}`,
      base_price: 1,
      currency: 'EUR',
    }));
    const ids: string[] = [];
    const batch = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products/batch',
      headers: h,
      payload: { products },
    });
    assert.equal(batch.statusCode, 200, batch.body);
    for (const d of batch.json<{ data: { product: { id: string } }[] }>().data) ids.push(d.product.id);
    const start = Date.parse('2026-02-01T00:00:00Z');
    const many = EXPORT_PAGE_ROWS + 2;
    await insertObservations(
      t,
      a,
      ids[0]!,
      Array.from({ length: many }, (_, i) => ({ price: `${i}`, at: new Date(start + i * 60_000).toISOString() })),
    );
    for (const id of ids.slice(1)) await insertObservations(t, a, id, [{ price: '2', at: '2026-02-10T00:00:00Z' }]);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/prices.csv?from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00Z&sort=sku',
      headers: h,
    });
    assert.equal(res.statusCode, 200);
    const rows = parseCsv(res.body).slice(1);
    assert.equal(rows.length, many + ids.length - 1);
    assert.equal(new Set(rows.map((r) => r[12])).size, rows.length, 'no observation twice');
    const first = rows.slice(0, many);
    assert.ok(first.every((r) => r[0] === ids[0]));
    assert.deepEqual(
      first.map((r) => r[6]),
      Array.from({ length: many }, (_, i) => String(i)),
      'oldest first across pages',
    );
    assert.deepEqual(
      rows.slice(many).map((r) => r[0]),
      ids.slice(1),
      'then product after product, in sort order',
    );
  });
});
