import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { Contract, fetchDocument } from '../openapi/support.js';
import { assertNoLeaks, countProducts, createProduct, expectError, snapshot } from '../products/support.js';

const valid = { name: 'Widget', base_price: 10, currency: 'USD' };

describe('http: malformed requests get JSON errors, never a 500', () => {
  const t = useTestApp();

  it('answers unparseable JSON with 400 invalid_json', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const before = await snapshot(t, accountId);
    for (const payload of [
      '{',
      '{"name": "x",}',
      "{'name': 'x'}",
      'undefined',
      '{"a":1}{"b":2}',
      '\u0000',
      '{"name":"x"',
      '[1,2',
      '{"a": NaN}',
      '\ufeff{"name":"x"}x',
    ]) {
      for (const [method, url] of [
        ['POST', '/api/v1/products'],
        ['PUT', `/api/v1/products/${p.id}`],
        ['PATCH', `/v1/products/${p.id}`],
        ['POST', '/api/v1/products/batch'],
      ] as const) {
        const res = await t.app.inject({ method, url, headers, payload });
        expectError(res, 400, 'invalid_json');
      }
    }
    assert.deepEqual(await snapshot(t, accountId), before);
  });

  it('refuses prototype-pollution keys with 400 and pollutes nothing', async () => {
    const { headers, accountId } = await t.newKey();
    for (const payload of [
      '{"name":"x","base_price":1,"currency":"USD","__proto__":{"polluted":true}}',
      '{"name":"x","base_price":1,"currency":"USD","constructor":{"prototype":{"polluted":true}}}',
      '{"products":[{"name":"x","base_price":1,"currency":"USD","__proto__":{"isAdmin":true}}]}',
    ]) {
      const url = payload.startsWith('{"products"') ? '/api/v1/products/batch' : '/api/v1/products';
      const res = await t.app.inject({ method: 'POST', url, headers, payload });
      expectError(res, 400, 'invalid_json');
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('refuses bodies that are not JSON with 415', async () => {
    const { headers, accountId } = await t.newKey();
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/jsonx',
      'text/json',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-type': type },
        payload: JSON.stringify(valid),
      });
      expectError(res, 415, 'unsupported_media_type');
    }
    // A body with no Content-Type at all.
    const { 'content-type': _omit, ...noType } = headers;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: noType,
      payload: Buffer.from(JSON.stringify(valid)),
    });
    expectError(res, 415, 'unsupported_media_type');
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('accepts JSON with a charset, in any case, and +json types', async () => {
    const { headers, accountId } = await t.newKey();
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset="utf-8"',
      'Application/JSON',
      'application/merge-patch+json',
      'application/json ; charset=utf8',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-type': type },
        payload: JSON.stringify(valid),
      });
      assert.equal(res.statusCode, 201, `${type}: ${res.body}`);
    }
    assert.equal(await countProducts(t, accountId), 6);
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=latin1']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-type': type },
        payload: JSON.stringify(valid),
      });
      expectError(res, 415, 'unsupported_media_type');
    }
    assert.equal(await countProducts(t, accountId), 6);
  });

  it('refuses a body over 1 MiB with 413 and writes nothing', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const before = await snapshot(t, accountId);
    const big = JSON.stringify({ ...valid, description: 'x'.repeat(1_048_576) });
    for (const [method, url] of [
      ['POST', '/api/v1/products'],
      ['PUT', `/api/v1/products/${p.id}`],
      ['PATCH', `/api/v1/products/${p.id}`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers, payload: big });
      const err = expectError(res, 413, 'payload_too_large');
      assert.match(err.error, /1048576/);
    }
    // Just under the limit is parsed (and then refused for its content, not its size).
    const under = JSON.stringify({ ...valid, description: 'x'.repeat(1_048_576 - 200) });
    expectError(
      await t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: under }),
      422,
      'validation_failed',
    );
    assert.deepEqual(await snapshot(t, accountId), before);
  });

  it('answers unknown routes 404 as JSON, with or without a key', async () => {
    const { headers } = await t.newKey();
    for (const url of [
      '/api/v1/nope',
      '/api/v2/products',
      '/v1/product',
      '/api/v1/products/prod_x/extra',
      '/',
      '/api',
      '/wp-admin.php',
    ]) {
      for (const h of [headers, {}]) {
        const err = expectError(await t.app.inject({ method: 'GET', url, headers: h }), 404, 'not_found');
        assert.ok(err.request_id);
      }
    }
  });

  it('answers a known path with the wrong method 405 with Allow', async () => {
    const { headers } = await t.newKey();
    const cases: [string, string, string[]][] = [
      ['DELETE', '/api/v1/products', ['GET', 'HEAD', 'POST']],
      ['PUT', '/api/v1/products', ['GET', 'HEAD', 'POST']],
      ['PATCH', '/v1/products', ['GET', 'HEAD', 'POST']],
      ['POST', '/api/v1/products/prod_abc', ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']],
      [
        'DELETE',
        '/api/v1/products/batch',
        ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT', 'POST'].filter((m) => m !== 'DELETE'),
      ],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({ method: method as 'GET', url, headers });
      if (method === 'DELETE' && url.endsWith('/batch')) {
        // DELETE /products/{id} with id "batch": a product that does not exist.
        expectError(res, 404, 'not_found');
        continue;
      }
      expectError(res, 405, 'method_not_allowed');
      assert.deepEqual(String(res.headers.allow).split(/,\s*/).sort(), [...allow].sort(), `${method} ${url}`);
    }
    const getBatch = await t.app.inject({ method: 'GET', url: '/api/v1/products/batch', headers });
    expectError(getBatch, 404, 'not_found');
  });

  it('does not treat query strings or trailing slashes as different routes', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    assert.equal((await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}/`, headers })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/products/', headers })).statusCode, 200);
  });

  it("cuts echoed input in details to the Error schema's lengths (found by the fuzzing suite)", async () => {
    const { headers } = await t.newKey();
    const contract = new Contract(await fetchDocument(t.app));
    const long = 'é'.repeat(5_000);
    for (const [url, payload, field] of [
      ['/api/v1/alerts', { name: 'A', condition: { type: long } }, 'condition.type'],
      ['/api/v1/products', { ...valid, [long]: 1 }, undefined],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url, headers, payload });
      expectError(res, 422, 'validation_failed');
      contract.check('POST', url, res);
      const details = res.json<{ details: { field: string; message: string }[] }>().details;
      assert.ok(
        details.some((d) => (field ? d.field === field : d.field.startsWith('éé'))),
        JSON.stringify(details).slice(0, 300),
      );
    }
  });

  it('echoes the request id in the header and the error body', async () => {
    const { headers } = await t.newKey();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { ...headers, 'x-request-id': 'client-abc.123' },
      payload: '{',
    });
    const err = expectError(res, 400, 'invalid_json');
    assert.equal(err.request_id, 'client-abc.123');
    assert.equal(res.headers['x-request-id'], 'client-abc.123');
  });

  it('survives a barrage of hostile input without a 500 or a leak', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const payloads: unknown[] = [
      null,
      0,
      -1,
      'x',
      [],
      [[]],
      {},
      { name: {} },
      { name: [] },
      { name: 0.1 },
      { base_price: {} },
      { base_price: [] },
      { currency: 1 },
      { currency: {} },
      { url: {} },
      { name: 'x'.repeat(100_000) },
      { sku: "'; drop table products; --" },
      Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i])),
      JSON.parse('{"a":'.repeat(2000) + '1' + '}'.repeat(2000)),
    ];
    for (const payload of payloads) {
      const text = JSON.stringify(payload);
      for (const [method, url] of [
        ['POST', '/api/v1/products'],
        ['PUT', `/api/v1/products/${p.id}`],
        ['POST', '/api/v1/products/batch'],
      ] as const) {
        const res = await t.app.inject({ method, url, headers, payload: text });
        assert.ok(
          res.statusCode < 500,
          `${method} ${url} ${text.slice(0, 60)}: ${res.statusCode} ${res.body.slice(0, 200)}`,
        );
        assertNoLeaks(res.body);
        if (method === 'PUT') assert.ok([200, 400, 413, 422].includes(res.statusCode));
      }
    }
    const queries = [
      '?limit=%00',
      '?sort=%00',
      '?q=%FF',
      '?q=%E2%82',
      '?cursor=%00',
      '?min_price=1e999999',
      '?created_after=%00',
      '?' + 'a=1&'.repeat(1000),
      '?limit[]=5',
      '?limit[a]=5',
      '?q[]=x',
      '?__proto__[x]=1',
      '?constructor[prototype][x]=1',
    ];
    for (const q of queries) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products${q}`, headers });
      assert.ok(res.statusCode < 500, `${q}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      assertNoLeaks(res.body);
    }
    // None of those creates anything; the only valid change among them is the SKU.
    assert.equal(await countProducts(t, accountId), 1);
    const got = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    assert.deepEqual(
      { ...got.json<Record<string, unknown>>(), sku: null, updated_at: null },
      { ...p, sku: null, updated_at: null },
    );
    assert.equal(got.json().sku, "'; drop table products; --");
  });
});
