import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { countProducts, expectError, fieldsOf } from '../products/support.js';
import { useListeningApp } from './support.js';

const product = (extra = '') => `{"name":"Widget${extra}","base_price":10,"currency":"USD"}`;

describe('hardening: JSON bodies that JSON.parse alone gets wrong', () => {
  const t = useTestApp();
  const l = useListeningApp(t);

  it('refuses 4 million nested [ in a batch body cheaply while /healthz stays responsive', async () => {
    const { headers } = await t.newKey();
    const base = `http://127.0.0.1:${l.port}`;
    const deep = fetch(`${base}/api/v1/products/batch`, {
      method: 'POST',
      headers,
      body: '{"products":' + '['.repeat(4_000_000),
    });
    const started = Date.now();
    const health = await fetch(`${base}/healthz`);
    const healthMs = Date.now() - started;
    assert.equal(health.status, 200);
    const res = await deep;
    assert.equal(res.status, 400);
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(body.code, 'invalid_json');
    assert.match(body.error, /deeper than 64 levels/);
    // Before the limit the parse alone held the event loop ~3 s.
    assert.ok(healthMs < 1000, `/healthz took ${healthMs} ms beside the deep body`);
  });

  it('allows 64 levels of nesting and refuses 65', async () => {
    const { headers } = await t.newKey();
    const nested = (depth: number) =>
      `{"name":"x","base_price":1,"currency":"USD","extra":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const ok = await t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: nested(64) });
    expectError(ok, 422, 'validation_failed'); // parsed, then refused for its unknown field
    const deep = await t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: nested(65) });
    assert.match(expectError(deep, 400, 'invalid_json').error, /64/);
  });

  it('refuses invalid UTF-8 with 400 and stores nothing', async () => {
    const { headers, accountId } = await t.newKey();
    for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      const payload = Buffer.concat([
        Buffer.from('{"name":"Widget'),
        Buffer.from(bad),
        Buffer.from('","base_price":10,"currency":"USD"}'),
      ]);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload });
      assert.match(expectError(res, 400, 'invalid_json').error, /UTF-8/);
    }
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('refuses lone surrogate escapes with 400 naming the field, and keeps a valid pair exactly', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [payload, field] of [
      [product('\\ud800'), 'name'],
      [product('\\udc00x'), 'name'],
      [product('\\ud800\\u0041'), 'name'],
      ['{"products":[' + product() + ',' + product('\\udbff') + ']}', 'products[1].name'],
    ] as const) {
      const url = payload.startsWith('{"products"') ? '/api/v1/products/batch' : '/api/v1/products';
      const res = await t.app.inject({ method: 'POST', url, headers, payload });
      assert.match(
        expectError(res, 400, 'invalid_json').error,
        new RegExp(`surrogate.*${field.replace(/[[\]]/g, '\\$&')}`),
      );
    }
    assert.equal(await countProducts(t, accountId), 0);
    const pair = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: product('\\ud83d\\ude00'),
    });
    assert.equal(pair.statusCode, 201, pair.body);
    assert.equal(pair.json<{ name: string }>().name, 'Widget\u{1f600}');
  });

  it('refuses money with more than 4 decimals even where JSON.parse would round it away', async () => {
    const { headers, accountId } = await t.newKey();
    for (const price of [
      '19.99000000000000000000000001',
      '19.990000000000000001',
      '1e400',
      '12345678901234567890',
      '19.99001',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"x","base_price":${price},"currency":"USD"}`,
      });
      assert.deepEqual(fieldsOf(expectError(res, 422, 'validation_failed')), ['base_price'], price);
    }
    const batch = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products/batch',
      headers,
      payload: `{"products":[${product()},{"name":"y","currency":"USD","base_price":19.99000000000000000000000001}]}`,
    });
    assert.deepEqual(fieldsOf(expectError(batch, 422, 'validation_failed')), ['products[1].base_price']);
    assert.equal(await countProducts(t, accountId), 0);
    // Zeros past the 4th place change nothing, and 15 significant digits are exact.
    for (const [price, stored] of [
      ['19.990000000000000000', 19.99],
      ['99999999999.9999', 99_999_999_999.9999],
      ['1.5e1', 15],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers,
        payload: `{"name":"p${price}","base_price":${price},"currency":"USD"}`,
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json<{ base_price: number }>().base_price, stored);
    }
  });
});
