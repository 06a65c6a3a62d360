import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { useTestApp } from '../helpers/app.js';
import { countProducts, expectError } from '../products/support.js';

const body = JSON.stringify({ name: 'Zipped', base_price: 10, currency: 'USD' });

describe('hardening: Content-Encoding of request bodies', () => {
  const t = useTestApp({ BODY_LIMIT_BYTES: '65536' });

  it('decodes gzip, x-gzip, deflate and br bodies', async () => {
    const { headers, accountId } = await t.newKey();
    for (const [encoding, payload] of [
      ['gzip', zlib.gzipSync(body)],
      ['x-gzip', zlib.gzipSync(body)],
      ['deflate', zlib.deflateSync(body)],
      ['br', zlib.brotliCompressSync(body)],
      ['GZIP', zlib.gzipSync(body)],
      ['identity', Buffer.from(body)],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-encoding': encoding },
        payload,
      });
      assert.equal(res.statusCode, 201, `${encoding}: ${res.body}`);
      assert.equal(res.json<{ name: string }>().name, 'Zipped');
    }
    assert.equal(await countProducts(t, accountId), 6);
  });

  it('answers 413 for a zip bomb: the limit applies to the decoded size', async () => {
    const { headers, accountId } = await t.newKey();
    // 64 MiB of spaces inside valid JSON, about 64 KiB gzipped: over the 64 KiB limit only once decoded.
    const bomb = zlib.gzipSync(
      Buffer.concat([Buffer.from('{"name":"'), Buffer.alloc(64 * 1024 * 1024, 0x20), Buffer.from('"}')]),
    );
    assert.ok(bomb.length < 65536 * 2);
    for (const encoding of ['gzip', 'br']) {
      const payload = encoding === 'gzip' ? bomb : zlib.brotliCompressSync(Buffer.alloc(8 * 1024 * 1024, 0x20));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-encoding': encoding },
        payload,
      });
      expectError(res, 413, 'payload_too_large');
    }
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('refuses other encodings with 415, and a plain body labelled br or gzip with 400', async () => {
    const { headers, accountId } = await t.newKey();
    for (const encoding of ['compress', 'zstd', 'gzip, br', 'x-unknown']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-encoding': encoding },
        payload: body,
      });
      assert.match(expectError(res, 415, 'unsupported_media_type').error, /Content-Encoding/);
    }
    for (const encoding of ['br', 'gzip', 'deflate']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { ...headers, 'content-encoding': encoding },
        payload: body,
      });
      assert.match(expectError(res, 400, 'invalid_request').error, new RegExp(`not valid ${encoding}`));
    }
    // Truncated gzip.
    const cut = zlib.gzipSync(body).subarray(0, 20);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { ...headers, 'content-encoding': 'gzip' },
      payload: cut,
    });
    expectError(res, 400, 'invalid_request');
    assert.equal(await countProducts(t, accountId), 0);
  });

  it('gzip bodies still go through the JSON rules (invalid JSON inside is 400 invalid_json)', async () => {
    const { headers } = await t.newKey();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { ...headers, 'content-encoding': 'gzip' },
      payload: zlib.gzipSync('{"name":'),
    });
    expectError(res, 400, 'invalid_json');
  });
});
