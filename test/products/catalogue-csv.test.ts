import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor } from '../competitors/support.js';
import { useTestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { createProduct, expectError } from './support.js';
import { Contract, fetchDocument } from '../openapi/support.js';
import { HOUR, observe, setRate } from '../prices/trends-support.js';

describe('products: catalogue CSV', () => {
  const t = useTestApp();

  it('writes one row per product with its latest position, as text/csv with a file name', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, {
      name: 'Kettle',
      sku: 'K-1',
      brand: 'Acme',
      category: 'Kitchen',
      base_price: 100,
      currency: 'EUR',
    });
    const bare = await createProduct(t, headers, { name: 'Bare', base_price: 5.5, currency: 'USD' });
    const a = (await createCompetitor(t, headers, { name: 'Shop A', website: 'https://a.example' })).id;
    const b = (await createCompetitor(t, headers, { name: 'Shop B', website: 'https://b.example' })).id;
    const c = (await createCompetitor(t, headers, { name: 'Shop C', website: 'https://c.example' })).id;
    await setRate(t, accountId, 'EUR', 'GBP', '0.8');
    await observe(t, accountId, [
      { product: p.id, price: 95, ago: HOUR },
      { product: p.id, competitor: a, price: 90, ago: HOUR },
      { product: p.id, competitor: b, price: 96, currency: 'GBP', ago: HOUR }, // 96 / 0.8 = 120 EUR
      { product: p.id, competitor: c, price: 10, currency: 'JPY', ago: HOUR }, // no rate: left out
    ]);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/products.csv', headers });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="products.csv"');
    assert.ok(res.headers['x-ratelimit-limit']);
    const rows = parseCsv(res.body);
    assert.deepEqual(rows[0], [
      'id',
      'sku',
      'name',
      'brand',
      'category',
      'currency',
      'base_price',
      'own_price',
      'own_price_source',
      'lowest_competitor_price',
      'average_competitor_price',
      'highest_competitor_price',
      'cheapest_competitor_id',
      'cheapest_competitor_name',
      'rank',
      'price_index',
      'competitors_compared',
      'competitors_left_out',
      'listing_count',
      'last_checked_at',
    ]);
    // Newest first, as GET /products. 95 against 90 and 120: second, index 95 / 105 x 100.
    assert.deepEqual(rows.slice(1), [
      [bare.id, '', 'Bare', '', '', 'USD', '5.5', '5.5', 'base_price', '', '', '', '', '', '', '', '0', '0', '0', ''],
      [
        p.id,
        'K-1',
        'Kettle',
        'Acme',
        'Kitchen',
        'EUR',
        '100',
        '95',
        'observation',
        '90',
        '105',
        '120',
        a,
        'Shop A',
        '2',
        '90.48',
        '2',
        '1',
        '0',
        '',
      ],
    ]);
  });

  it('quotes per RFC 4180 and defuses formulas, keeping every character', async () => {
    const { headers } = await t.newKey();
    const names = [
      'a,b',
      'say "hi"',
      'line\nbreak',
      '=HYPERLINK("http://evil.example","x")',
      '+1+2',
      '-3',
      '@SUM(A1)',
      "<b>html</b>'; drop table products;--",
      'Zürich ☕ 😀',
    ];
    for (const [i, name] of names.entries())
      await createProduct(t, headers, { name, sku: `\tS${i}`, base_price: 1, currency: 'EUR' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/products.csv?sort=created_at', headers });
    assert.equal(res.statusCode, 200, res.body);
    const rows = parseCsv(res.body).slice(1);
    assert.deepEqual(
      rows.map((r) => r[2]),
      [
        'a,b',
        'say "hi"',
        'line\nbreak',
        '\'=HYPERLINK("http://evil.example","x")',
        "'+1+2",
        "'-3",
        "'@SUM(A1)",
        "<b>html</b>'; drop table products;--",
        'Zürich ☕ 😀',
      ],
    );
    assert.deepEqual(
      rows.map((r) => r[1]),
      names.map((_, i) => `'\tS${i}`),
    );
    assert.ok(res.body.includes('"say ""hi"""'));
  });

  it("streams every product across pages, with the filters and sort of GET /products, and no other account's", async () => {
    const { headers } = await t.newKey();
    const other = await t.newKey();
    await createProduct(t, other.headers, { name: 'not mine', currency: 'EUR' });
    const items = Array.from({ length: 1203 }, (_, i) => ({
      name: `p${String(i).padStart(4, '0')}`,
      base_price: i % 7,
      currency: i % 2 ? 'EUR' : 'USD',
    }));
    for (const chunk of [items.slice(0, 1000), items.slice(1000)]) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products/batch',
        headers,
        payload: { products: chunk },
      });
      assert.equal(r.statusCode, 200, r.body);
    }
    const all = parseCsv(
      (await t.app.inject({ method: 'GET', url: '/v1/products.csv?sort=name', headers })).body,
    ).slice(1);
    assert.deepEqual(
      all.map((r) => r[2]),
      items.map((i) => i.name),
    );
    const some = parseCsv(
      (
        await t.app.inject({
          method: 'GET',
          url: '/api/v1/products.csv?currency=eur&min_price=2&max_price=3&sort=-name',
          headers,
        })
      ).body,
    ).slice(1);
    const expected = items
      .filter((i) => i.currency === 'EUR' && i.base_price >= 2 && i.base_price <= 3)
      .map((i) => i.name)
      .reverse();
    assert.deepEqual(
      some.map((r) => r[2]),
      expected,
    );
    assert.ok(expected.length > 0);
  });

  it('refuses bad parameters with 422 and needs a key', async () => {
    const { headers } = await t.newKey();
    const bad: [string, string][] = [
      ['limit=5', 'limit'],
      ['cursor=abc', 'cursor'],
      ['format=json', 'format'],
      ['sort=price', 'sort'],
      ['currency=EURO', 'currency'],
      ['min_price=-1', 'min_price'],
      ['min_price=1.23456', 'min_price'],
      ['max_price=1e20', 'max_price'],
      ['min_price=5&max_price=1', 'min_price'],
      ['created_after=yesterday', 'created_after'],
      ['created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
      ['q=', 'q'],
    ];
    for (const [query, field] of bad) {
      const body = expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/products.csv?${query}`, headers }),
        422,
        'validation_failed',
      );
      assert.ok(
        body.details?.some((d) => d.field === field),
        `${query}: ${JSON.stringify(body.details)}`,
      );
    }
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/products.csv' }), 401, 'unauthorized');
  });

  it('is streamed, so it promises no ETag and no 304, and sends none (found by the fuzzing suite)', async () => {
    const { headers } = await t.newKey();
    await createProduct(t, headers, { name: 'Kettle', base_price: 10, currency: 'EUR' });
    const contract = new Contract(await fetchDocument(t.app));
    for (const path of ['/api/v1/products.csv', '/v1/products.csv']) {
      const op = contract.operation('GET', path);
      assert.equal(op.responses['304'], undefined);
      assert.equal((op.responses['200']!.headers as Record<string, unknown>).ETag, undefined);
      for (const inm of [undefined, '*']) {
        const res = await t.app.inject({
          method: 'GET',
          url: path,
          headers: { ...headers, ...(inm ? { 'if-none-match': inm } : {}) },
        });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers.etag, undefined);
        contract.check('GET', path, res);
      }
    }
  });
});
