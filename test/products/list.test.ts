import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, type Headers } from './support.js';
import type { Page, Product } from '../helpers/api-types.js';

async function page(t: TestApp, headers: Headers, query: string, prefix = '/api/v1') {
  const res = await t.app.inject({ method: 'GET', url: `${prefix}/products${query ? `?${query}` : ''}`, headers });
  assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
  return res.json<Page<Product>>();
}

/** Follows next_cursor to the end; returns every item in order and the number of pages. */
async function walk(t: TestApp, headers: Headers, query: string, limit: number) {
  const items: Product[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', String(limit));
    if (cursor) q.set('cursor', cursor);
    const p = await page(t, headers, q.toString());
    pages++;
    assert.ok(p.data.length <= limit);
    assert.equal(p.pagination.limit, limit);
    assert.equal(p.pagination.has_more, p.pagination.next_cursor !== null);
    if (p.pagination.has_more) assert.equal(p.data.length, limit, 'only the last page may be short');
    items.push(...p.data);
    cursor = p.pagination.next_cursor;
    assert.ok(pages < 1000, 'pagination does not end');
  } while (cursor);
  return { items, pages };
}

const bytes = (s: string | null) => Buffer.from(s ?? '', 'utf8');
/** The order the API promises: text bytewise (NULL as empty), numbers and times by value. */
function compareBy(field: keyof Product) {
  return (a: Product, b: Product) => {
    const x = a[field];
    const y = b[field];
    if (field === 'base_price') return (x as number) - (y as number);
    if (field === 'created_at' || field === 'updated_at') return Date.parse(x as string) - Date.parse(y as string);
    return Buffer.compare(bytes(x as string | null), bytes(y as string | null));
  };
}

async function batch(t: TestApp, headers: Headers, products: Record<string, unknown>[]) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/products/batch',
    headers,
    payload: { products, atomic: true },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: { product: Product }[] }>().data.map((d) => d.product);
}

describe('products: list pagination and sorting', () => {
  const t = useTestApp();

  it('answers the list envelope with a default limit of 20, newest first', async () => {
    const { headers } = await t.newKey();
    const empty = await page(t, headers, '');
    assert.deepEqual(empty, { data: [], pagination: { limit: 20, has_more: false, next_cursor: null } });
    const made: Product[] = [];
    for (let i = 0; i < 23; i++) made.push(await createProduct(t, headers, { name: `p${i}` }));
    const first = await page(t, headers, '');
    assert.equal(first.data.length, 20);
    assert.equal(first.pagination.limit, 20);
    assert.equal(first.pagination.has_more, true);
    assert.equal(typeof first.pagination.next_cursor, 'string');
    assert.equal(first.data[0]!.id, made[22]!.id, 'newest first');
    const rest = await page(t, headers, `cursor=${encodeURIComponent(first.pagination.next_cursor!)}`);
    assert.deepEqual(
      rest.data.map((p) => p.name),
      ['p2', 'p1', 'p0'],
    );
    assert.equal(rest.pagination.has_more, false);
    assert.equal(rest.pagination.next_cursor, null);
    // Exactly one page's worth: no has_more.
    const exact = await page(t, headers, 'limit=23');
    assert.equal(exact.data.length, 23);
    assert.equal(exact.pagination.has_more, false);
    // The same under /v1.
    assert.equal((await page(t, headers, 'limit=100', '/v1')).data.length, 23);
  });

  it('accepts limit 1 to 100 and refuses anything else with 422', async () => {
    const { headers } = await t.newKey();
    for (let i = 0; i < 3; i++) await createProduct(t, headers);
    assert.equal((await page(t, headers, 'limit=1')).data.length, 1);
    assert.equal((await page(t, headers, 'limit=100')).pagination.limit, 100);
    for (const bad of [
      '0',
      '101',
      '-1',
      'abc',
      '1.5',
      '',
      '1e2',
      '0x10',
      '10abc',
      '99999999999999999999',
      ' 5',
      '5 ',
      '+5',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/products?limit=${encodeURIComponent(bad)}`,
        headers,
      });
      assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), ['limit'], `limit=${bad}`);
    }
    expectError(
      await t.app.inject({ method: 'GET', url: '/api/v1/products?limit=5&limit=6', headers }),
      422,
      'validation_failed',
    );
  });

  it('walks every item exactly once for every sort, ascending and descending, with ties and NULLs', async () => {
    const { headers } = await t.newKey();
    const specs: Record<string, unknown>[] = [];
    for (let i = 0; i < 25; i++) {
      specs.push({
        name: ['Alpha', 'beta', 'Gamma', 'alpha', 'Ärger', '🦊'][i % 6], // ties, case and non-ASCII
        base_price: [5, 5, 0, 19.99, 1234567.8912][i % 5], // ties
        currency: 'USD',
        sku: i % 4 === 0 ? null : `SKU-${String(i % 7)}-${i}`,
        brand: i % 3 === 0 ? null : i % 3 === 1 ? 'Acme' : '', // NULL, value and empty string
        category: i % 5 === 0 ? null : ['a', 'b'][i % 2],
      });
    }
    // Half in one batch (identical created_at), half one by one.
    const made = [...(await batch(t, headers, specs.slice(0, 13)))];
    for (const s of specs.slice(13)) made.push(await createProduct(t, headers, s));
    // Some updates, so updated_at differs from created_at and has ties too.
    for (const p of made.slice(0, 3)) {
      await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: { description: 'touched' },
      });
    }
    const ids = new Set(made.map((p) => p.id));

    for (const field of ['created_at', 'updated_at', 'name', 'base_price', 'sku', 'brand', 'category'] as const) {
      for (const sort of [field, `-${field}`]) {
        const all = await page(t, headers, `sort=${sort}&limit=100`);
        assert.equal(all.data.length, ids.size);
        const cmp = compareBy(field);
        for (let i = 1; i < all.data.length; i++) {
          const c = cmp(all.data[i - 1]!, all.data[i]!);
          assert.ok(sort.startsWith('-') ? c >= 0 : c <= 0, `${sort} out of order at ${i}`);
        }
        for (const limit of [1, 6]) {
          const { items, pages } = await walk(t, headers, `sort=${sort}`, limit);
          assert.deepEqual(
            items.map((p) => p.id),
            all.data.map((p) => p.id),
            `${sort} limit=${limit}`,
          );
          assert.equal(pages, Math.ceil(ids.size / limit), 'no empty trailing page');
        }
      }
    }
  });

  it('orders exact ties by id in both directions', async () => {
    const { headers } = await t.newKey();
    await batch(
      t,
      headers,
      Array.from({ length: 6 }, () => ({ name: 'same', base_price: 1, currency: 'USD' })),
    );
    const asc = (await page(t, headers, 'sort=name')).data.map((p) => p.id);
    const desc = (await page(t, headers, 'sort=-name')).data.map((p) => p.id);
    assert.deepEqual(desc, [...asc].reverse());
    assert.deepEqual(asc, [...asc].sort());
  });

  it('stays stable when products are created between pages', async () => {
    const { headers } = await t.newKey();
    const original = new Set<string>();
    for (let i = 0; i < 12; i++) original.add((await createProduct(t, headers, { name: `o${i}`, base_price: i })).id);
    for (const sort of ['-created_at', 'created_at', 'name', '-base_price']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let n = 0;
      do {
        const p = await page(
          t,
          headers,
          `sort=${sort}&limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        seen.push(...p.data.map((x) => x.id));
        cursor = p.pagination.next_cursor;
        // Inserts between pages, sorting before, among and after the items not yet seen.
        await createProduct(t, headers, { name: `new-${sort}-${n}`, base_price: n * 3 });
        await createProduct(t, headers, { name: `o${n}`, base_price: 100 });
        n++;
      } while (cursor);
      assert.equal(new Set(seen).size, seen.length, `${sort}: no item twice`);
      for (const id of original) assert.ok(seen.includes(id), `${sort}: every original item once`);
    }
  });

  it('refuses a mangled, forged or foreign cursor with 400, never 500', async () => {
    const { headers } = await t.newKey();
    for (let i = 0; i < 3; i++) await createProduct(t, headers, { name: `c${i}` });
    const byName = (await page(t, headers, 'sort=name&limit=1')).pagination.next_cursor!;
    const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const cases: [string, string][] = [
      ['sort=-name', byName], // another sort's cursor
      ['', byName], // default sort
      ['', 'garbage'],
      ['', '!!!!'],
      ['', forge({ sort: '-created_at' })],
      ['', forge(['-created_at', 'not a time', 'prod_x'])],
      ['', forge(['-created_at', '0000-01-01T00:00:00.000Z', 'prod_x'])],
      ['', forge(['-created_at', 12, 'prod_x'])],
      ['', forge(['-created_at', '2026-01-01T00:00:00.000Z', 'prod_\u0000'])],
      ['sort=base_price', forge(['base_price', 'abc', 'prod_x'])],
      ['sort=base_price', forge(['base_price', '1e999999', 'prod_x'])],
      ['sort=base_price', forge(['base_price', null, 'prod_x'])],
      ['sort=name', forge(['name', 'a\u0000', 'prod_x'])],
      ['sort=name', forge(['name', null, 'prod_x'])],
      ['sort=sku', forge(['sku', 5, 'prod_x'])],
    ];
    for (const [q, cursor] of cases) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/products?${q}&cursor=${encodeURIComponent(cursor)}`,
        headers,
      });
      const body = expectError(res, 400, 'invalid_request');
      assert.deepEqual(fieldsOf(body), ['cursor'], `${q} ${cursor}`);
    }
  });

  it('paginates by name when names are long multi-byte text', async () => {
    const { headers } = await t.newKey();
    // The longest cursors: 4-byte characters, and characters JSON must escape (\u0001 -> 6 bytes).
    for (const ch of ['🦊', '🐺', '漢', '\u0001', '"']) {
      await createProduct(t, headers, { name: ch.repeat(200) });
      await createProduct(t, headers, { name: ch.repeat(200) });
    }
    for (const sort of ['name', '-name']) {
      const { items } = await walk(t, headers, `sort=${sort}`, 1);
      assert.equal(new Set(items.map((p) => p.id)).size, 10);
    }
  });
});

describe('products: list filters', () => {
  const t = useTestApp();

  async function fixture() {
    const key = await t.newKey();
    const h = key.headers;
    const p = {
      kettle: await createProduct(t, h, {
        name: 'Kettle',
        brand: 'Acme',
        sku: 'K-1',
        category: 'kitchen',
        base_price: 19.99,
        currency: 'EUR',
        description: 'Boils water',
      }),
      toaster: await createProduct(t, h, {
        name: 'Toaster',
        brand: 'acme',
        sku: 'T-1',
        category: 'kitchen',
        base_price: 35,
        currency: 'USD',
      }),
      drill: await createProduct(t, h, {
        name: 'Drill 100% power',
        brand: 'Bosch',
        sku: 'D_1',
        category: 'tools',
        base_price: 89.5,
        currency: 'USD',
      }),
      saw: await createProduct(t, h, {
        name: 'Saw',
        brand: null,
        sku: null,
        category: null,
        base_price: 0,
        currency: 'GBP',
        description: 'A_b and 50% off \\ sale',
      }),
      dx: await createProduct(t, h, {
        name: 'DX1',
        brand: 'Bosch',
        sku: 'DX1',
        category: 'tools',
        base_price: 1234567.8912,
        currency: 'USD',
      }),
    };
    return { h, p };
  }
  const names = (pg: Page<Product>) => pg.data.map((x) => x.name).sort();

  it('filters on category, brand and sku exactly (case-sensitive)', async () => {
    const { h } = await fixture();
    assert.deepEqual(names(await page(t, h, 'category=kitchen')), ['Kettle', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'category=Kitchen')), []);
    assert.deepEqual(names(await page(t, h, 'brand=Acme')), ['Kettle']);
    assert.deepEqual(names(await page(t, h, 'brand=acme')), ['Toaster']);
    assert.deepEqual(names(await page(t, h, 'sku=D_1')), ['Drill 100% power']);
    assert.deepEqual(names(await page(t, h, 'sku=D%251')), []);
    assert.deepEqual(names(await page(t, h, 'brand=Bosch&category=tools')), ['DX1', 'Drill 100% power']);
  });

  it('filters on currency in any case', async () => {
    const { h } = await fixture();
    assert.deepEqual(names(await page(t, h, 'currency=USD')), ['DX1', 'Drill 100% power', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'currency=usd')), ['DX1', 'Drill 100% power', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'currency=JPY')), []);
  });

  it('filters on min_price and max_price, inclusive and exact', async () => {
    const { h } = await fixture();
    assert.deepEqual(names(await page(t, h, 'min_price=19.99')), ['DX1', 'Drill 100% power', 'Kettle', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'min_price=19.9901')), ['DX1', 'Drill 100% power', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'max_price=19.99')), ['Kettle', 'Saw']);
    assert.deepEqual(names(await page(t, h, 'max_price=0')), ['Saw']);
    assert.deepEqual(names(await page(t, h, 'min_price=35&max_price=89.5')), ['Drill 100% power', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'min_price=1234567.8912&max_price=1234567.8912')), ['DX1']);
    assert.deepEqual(names(await page(t, h, 'min_price=19.99&sort=base_price')), [
      'DX1',
      'Drill 100% power',
      'Kettle',
      'Toaster',
    ]);
  });

  it('searches q case-insensitively over name, brand, sku and description', async () => {
    const { h } = await fixture();
    assert.deepEqual(names(await page(t, h, 'q=kett')), ['Kettle']);
    assert.deepEqual(names(await page(t, h, 'q=ACME')), ['Kettle', 'Toaster']);
    assert.deepEqual(names(await page(t, h, 'q=t-1')), ['Toaster']);
    assert.deepEqual(names(await page(t, h, 'q=water')), ['Kettle']);
    assert.deepEqual(names(await page(t, h, 'q=nothing-like-this')), []);
    // category is not searched
    assert.deepEqual(names(await page(t, h, 'q=kitchen')), []);
  });

  it('treats % _ and \\ in q literally', async () => {
    const { h } = await fixture();
    assert.deepEqual(names(await page(t, h, 'q=%25')), ['Drill 100% power', 'Saw']);
    assert.deepEqual(names(await page(t, h, 'q=100%25')), ['Drill 100% power']);
    assert.deepEqual(names(await page(t, h, 'q=_')), ['Drill 100% power', 'Saw']); // sku D_1, description A_b
    assert.deepEqual(names(await page(t, h, 'q=D_1')), ['Drill 100% power']);
    assert.deepEqual(names(await page(t, h, 'q=%5C')), ['Saw']);
    assert.deepEqual(names(await page(t, h, 'q=%27%20or%201%3D1--')), []);
  });

  it('filters on created_after (inclusive) and created_before (exclusive)', async () => {
    const { h, p } = await fixture();
    const all = [p.kettle, p.toaster, p.drill, p.saw, p.dx].sort(
      (a, b) => Date.parse(a.created_at) - Date.parse(b.created_at),
    );
    const mid = all[2]!;
    const after = await page(t, h, `created_after=${encodeURIComponent(mid.created_at)}&limit=100`);
    assert.ok(after.data.some((x) => x.id === mid.id));
    assert.ok(after.data.every((x) => Date.parse(x.created_at) >= Date.parse(mid.created_at)));
    const before = await page(t, h, `created_before=${encodeURIComponent(mid.created_at)}&limit=100`);
    assert.ok(!before.data.some((x) => x.id === mid.id));
    assert.ok(before.data.every((x) => Date.parse(x.created_at) < Date.parse(mid.created_at)));
    assert.equal(after.data.length + before.data.length, 5);
    assert.equal((await page(t, h, 'created_after=2000-01-01T00:00:00Z')).data.length, 5);
    assert.equal((await page(t, h, 'created_before=2000-01-01T00:00:00%2B02:00')).data.length, 0);
    assert.equal((await page(t, h, 'created_after=9999-12-31T23:59:59Z')).data.length, 0);
  });

  it('combines filters with sorting and pagination', async () => {
    const { h } = await fixture();
    const { items } = await walk(t, h, 'currency=USD&sort=-base_price&min_price=1', 1);
    assert.deepEqual(
      items.map((x) => x.name),
      ['DX1', 'Drill 100% power', 'Toaster'],
    );
  });

  it('refuses bad filter values with 422 naming the parameter, never ignoring them', async () => {
    const { h } = await fixture();
    const bad: [string, string][] = [
      ['min_price=abc', 'min_price'],
      ['min_price=-1', 'min_price'],
      ['min_price=1.23456', 'min_price'],
      ['min_price=', 'min_price'],
      ['max_price=1e11', 'max_price'],
      ['max_price=NaN', 'max_price'],
      ['max_price=Infinity', 'max_price'],
      ['max_price=0x10', 'max_price'],
      ['min_price=%205', 'min_price'],
      ['min_price=.5', 'min_price'],
      ['currency=xx', 'currency'],
      ['currency=ABC', 'currency'],
      ['currency=', 'currency'],
      ['created_after=yesterday', 'created_after'],
      ['created_after=2026-01-01', 'created_after'],
      ['created_after=2026-01-01T00:00:00', 'created_after'],
      ['created_before=2026-02-30T00:00:00Z', 'created_before'],
      ['created_before=0000-01-01T00:00:00Z', 'created_before'],
      ['created_after=0000-06-01T00:00:00Z', 'created_after'],
      ['sort=price', 'sort'],
      ['sort=', 'sort'],
      ['sort=--name', 'sort'],
      ['q=', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=a%00b', 'q'],
      ['category=a%00', 'category'],
      ['brand=' + 'b'.repeat(101), 'brand'],
      ['sku=a&sku=b', 'sku'],
      ['colour=red', 'colour'],
      ['page=2', 'page'],
      ['offset=10', 'offset'],
      ['min_price=10&max_price=5', 'min_price'],
      ['created_after=2026-02-01T00:00:00Z&created_before=2026-01-01T00:00:00Z', 'created_after'],
    ];
    for (const [q, field] of bad) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products?${q}`, headers: h });
      const body = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), [field], q);
    }
  });
});
