import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { countProducts, createProduct, expectError, fieldsOf, type Headers, snapshot } from './support.js';
import type { Product } from '../helpers/api-types.js';

const valid = { name: 'Widget', base_price: 10, currency: 'USD' };

describe('products: money', () => {
  const t = useTestApp();

  for (const price of [0, 0.1, 0.0001, 19.99, 1234567.8912, 99999999999.9999, 1e10, 42]) {
    it(`round-trips ${price} exactly through create, read, list and update`, async () => {
      const { headers, accountId } = await t.newKey();
      // The JSON text itself, so no client-side float formatting is involved.
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"m","currency":"USD","base_price":${price}}`,
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.match(created.body, new RegExp(`"base_price":${String(price).replace('.', '\\.')}[,}]`));
      const p = created.json<Product>();
      assert.equal(p.base_price, price);
      const stored = await t.rt.db.query<{ v: string }>('select base_price::text as v from products where id = $1', [
        p.id,
      ]);
      assert.equal(Number(stored.rows[0]!.v), price);
      const trim = (v: string) => (v.includes('.') ? v.replace(/\.?0+$/, '') : v);
      assert.equal(trim(stored.rows[0]!.v), String(price));
      const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
      assert.equal(got.json<Product>().base_price, price);
      const list = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers });
      assert.equal(list.json<{ data: Product[] }>().data[0]!.base_price, price);
      const upd = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: `{"base_price":${price}}`,
      });
      assert.equal(upd.json<Product>().base_price, price);
      assert.equal(await countProducts(t, accountId), 1);
    });
  }

  it('accepts exponent notation that has at most 4 decimals', async () => {
    const { headers } = await t.newKey();
    for (const [text, value] of [
      ['1e3', 1000],
      ['1.5E-3', 0.0015],
      ['2.5e+2', 250],
      ['-0', 0],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"e","currency":"USD","base_price":${text}}`,
      });
      assert.equal(res.statusCode, 201, `${text}: ${res.body}`);
      assert.equal(res.json<Product>().base_price, value);
    }
  });

  const bad: [string, string][] = [
    ['19.99999', 'more than 4 decimals'],
    ['0.00001', 'more than 4 decimals'],
    ['0.30000000000000004', 'float noise'],
    ['12345678901.12345', 'more than 4 decimals, large'],
    ['-0.01', 'negative'],
    ['-5', 'negative'],
    ['100000000000', '1e11'],
    ['1e11', '1e11 in exponent form'],
    ['1e308', 'huge exponent'],
    ['1e400', 'beyond double range'],
    ['-1e400', 'negative beyond double range'],
    ['1e-7', 'tiny exponent'],
    ['"19.99"', 'a string'],
    ['"NaN"', 'a NaN string'],
    ['"Infinity"', 'an Infinity string'],
    ['""', 'empty string'],
    ['true', 'a boolean'],
    ['[19.99]', 'an array'],
    ['{"amount":19.99}', 'an object'],
  ];
  for (const [text, why] of bad) {
    it(`refuses base_price ${text} (${why}) with 422 on create and update`, async () => {
      const { headers, accountId } = await t.newKey();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"m","currency":"USD","base_price":${text}}`,
      });
      const body = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['base_price']);
      assert.equal(await countProducts(t, accountId), 0);
      const p = await createProduct(t, headers);
      const before = await snapshot(t, accountId);
      const upd = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/products/${p.id}`,
        headers,
        payload: `{"base_price":${text}}`,
      });
      assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['base_price']);
      assert.deepEqual(await snapshot(t, accountId), before);
    });
  }

  it('refuses NaN and Infinity literals as invalid JSON', async () => {
    const { headers } = await t.newKey();
    for (const text of ['NaN', 'Infinity', '-Infinity', '0x10', '1.', '.5', '01']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"m","currency":"USD","base_price":${text}}`,
      });
      expectError(res, 400, 'invalid_json');
    }
  });
});

describe('products: field validation', () => {
  const t = useTestApp();

  async function post(headers: Headers, payload: unknown) {
    return t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: payload as object });
  }

  it('names every bad field in details, one entry each', async () => {
    const { headers, accountId } = await t.newKey();
    const res = await post(headers, {
      name: '',
      brand: 5,
      sku: '   ',
      category: ['x'],
      description: false,
      base_price: 'cheap',
      currency: 'XYZ',
      url: 'ftp://files.example/x',
    });
    const body = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(body), [
      'base_price',
      'brand',
      'category',
      'currency',
      'description',
      'name',
      'sku',
      'url',
    ]);
    for (const d of body.details!) assert.ok(d.message.length > 0 && d.message.length < 200, d.message);
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('names each missing required field', async () => {
    const { headers } = await t.newKey();
    const body = expectError(await post(headers, {}), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(body), ['base_price', 'currency', 'name']);
    for (const d of body.details!) assert.match(d.message, /required/);
  });

  it('refuses unknown fields, by name', async () => {
    const { headers, accountId } = await t.newKey();
    const body = expectError(
      await post(headers, { ...valid, colour: 'red', id: 'prod_x', created_at: '2020-01-01T00:00:00Z' }),
      422,
      'validation_failed',
    );
    assert.deepEqual(fieldsOf(body), ['colour', 'created_at', 'id']);
    const p = await createProduct(t, headers);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { colour: 'red' },
    });
    assert.deepEqual(fieldsOf(expectError(upd, 422, 'validation_failed')), ['colour']);
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('refuses a body that is not an object', async () => {
    const { headers } = await t.newKey();
    for (const payload of ['[]', '"text"', '42', 'null', 'true']) {
      expectError(await post(headers, payload), 422, 'validation_failed');
    }
  });

  it('refuses an empty POST body with 422', async () => {
    const { headers, accountId } = await t.newKey();
    expectError(await post(headers, ''), 422, 'validation_failed');
    expectError(await t.app.inject({ method: 'POST', url: '/api/v1/products', headers }), 422, 'validation_failed');
    const p = await createProduct(t, headers);
    expectError(
      await t.app.inject({ method: 'PUT', url: `/api/v1/products/${p.id}`, headers }),
      422,
      'validation_failed',
    );
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('upper-cases currency codes and refuses unknown ones', async () => {
    const { headers } = await t.newKey();
    for (const [given, stored] of [
      ['usd', 'USD'],
      ['Eur', 'EUR'],
      ['jpy', 'JPY'],
      ['CHF', 'CHF'],
    ]) {
      assert.equal((await createProduct(t, headers, { currency: given })).currency, stored);
    }
    for (const cur of ['ABC', 'US', 'USDX', 'U$D', '', '123', 'usd ', 'EURO', 'ÜSD']) {
      const body = expectError(await post(headers, { ...valid, currency: cur }), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['currency'], cur);
    }
  });

  it('accepts only absolute http(s) URLs', async () => {
    const { headers } = await t.newKey();
    for (const url of [
      'http://a.example',
      'https://shop.example/p?id=1&x=%20#frag',
      'HTTPS://SHOP.EXAMPLE/',
      'https://[::1]:8443/x',
    ]) {
      assert.equal((await createProduct(t, headers, { url })).url, url);
    }
    for (const url of [
      'ftp://a.example',
      'javascript:alert(1)',
      'data:text/html,hi',
      '//a.example/x',
      '/relative',
      'shop.example',
      'https://exa mple.com',
      '',
      'mailto:a@b.c',
      'http:\\\\evil',
    ]) {
      const body = expectError(await post(headers, { ...valid, url }), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), ['url'], url);
    }
  });

  it('enforces maximum lengths and accepts the maximum itself', async () => {
    const { headers } = await t.newKey();
    const limits = { name: 200, brand: 100, sku: 100, category: 100, description: 10_000 };
    for (const [field, max] of Object.entries(limits)) {
      const ok = await post(headers, { ...valid, [field]: 'a'.repeat(max) });
      assert.equal(ok.statusCode, 201, `${field} at ${max}: ${ok.body}`);
      const body = expectError(
        await post(headers, { ...valid, [field]: 'b'.repeat(max + 1) }),
        422,
        'validation_failed',
      );
      assert.deepEqual(fieldsOf(body), [field]);
      assert.match(body.details![0]!.message, new RegExp(String(max)));
    }
    // Characters, not bytes or UTF-16 units: 200 emoji are a valid name.
    assert.equal((await post(headers, { ...valid, name: '🦊'.repeat(200) })).statusCode, 201);
    const longUrl = `https://a.example/${'p'.repeat(2048)}`;
    assert.deepEqual(fieldsOf(expectError(await post(headers, { ...valid, url: longUrl }), 422, 'validation_failed')), [
      'url',
    ]);
  });

  it('refuses blank names and SKUs but keeps surrounding spaces of real ones', async () => {
    const { headers } = await t.newKey();
    for (const name of ['', ' ', '\t\n', '\u00a0']) {
      assert.deepEqual(
        fieldsOf(expectError(await post(headers, { ...valid, name }), 422, 'validation_failed')),
        ['name'],
        JSON.stringify(name),
      );
    }
    assert.deepEqual(fieldsOf(expectError(await post(headers, { ...valid, sku: '' }), 422, 'validation_failed')), [
      'sku',
    ]);
    const p = await createProduct(t, headers, { name: '  padded  ' });
    assert.equal(p.name, '  padded  ');
  });

  it('refuses NUL characters in every text field with 422, never 500', async () => {
    const { headers, accountId } = await t.newKey();
    for (const field of ['name', 'brand', 'sku', 'category', 'description', 'url']) {
      const value = field === 'url' ? 'https://a.example/\u0000' : 'a\u0000b';
      const body = expectError(await post(headers, { ...valid, [field]: value }), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(body), [field]);
    }
    // ... and in a field name.
    expectError(await post(headers, { ...valid, 'na\u0000me': 'x' }), 422, 'validation_failed');
    const p = await createProduct(t, headers);
    const upd = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/products/${p.id}`,
      headers,
      payload: { description: '\u0000' },
    });
    expectError(upd, 422, 'validation_failed');
    assert.equal(await countProducts(t, accountId), 1);
  });

  it('stores SQL and HTML verbatim', async () => {
    const { headers } = await t.newKey();
    const nasty = {
      name: "Robert'); DROP TABLE products;--",
      brand: '<script>alert("x")</script>',
      sku: "' OR '1'='1",
      category: '%_\\',
      description: '<img src=x onerror=alert(1)> &amp; "quotes" \\n $1 ${x} `tick`',
    };
    const p = await createProduct(t, headers, nasty);
    const got = (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers })).json<Product>();
    for (const [k, v] of Object.entries(nasty)) assert.equal(got[k as keyof Product], v);
    // The table is still there and still holds only this account's one row.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/products', headers });
    assert.equal(list.json<{ data: unknown[] }>().data.length, 1);
  });

  it('round-trips unicode: emoji, RTL, combining characters, astral planes', async () => {
    const { headers } = await t.newKey();
    const texts = {
      name: 'Café ☕ 👩🏽‍💻 🇩🇪',
      brand: 'שלום עולם مرحبا',
      sku: 'e\u0301\u0301-Å-Å',
      category: '漢字カテゴリ',
      description: 'Zalgo: Z̷̢̛a̵l̸g̶o̴ \u200d\u200f\ufeff 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u2028 line sep',
    };
    const p = await createProduct(t, headers, texts);
    const got = (await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers })).json<Product>();
    for (const [k, v] of Object.entries(texts)) assert.equal(got[k as keyof Product], v, k);
    // Not normalised: the precomposed and decomposed forms are different SKUs.
    await createProduct(t, headers, { sku: '\u00e9' });
    await createProduct(t, headers, { sku: 'e\u0301' });
  });

  it('does not turn a lone surrogate into a 500', async () => {
    const { headers } = await t.newKey();
    const res = await post(headers, '{"name":"bad \\ud800 half","base_price":1,"currency":"USD"}');
    // Refused, never stored as U+FFFD (issue 12, item 3): a 400 naming the field.
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json<{ error: string }>().error, /lone UTF-16 surrogate.*name/);
  });

  it('ignores nothing: a wrong type in an optional field is refused, not dropped', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [field, value] of [
      ['brand', 1],
      ['sku', {}],
      ['category', true],
      ['description', []],
      ['url', 5],
    ] as const) {
      assert.deepEqual(
        fieldsOf(expectError(await post(headers, { ...valid, [field]: value }), 422, 'validation_failed')),
        [field],
      );
    }
    assert.equal(await countProducts(t, accountId), 0);
  });
});
