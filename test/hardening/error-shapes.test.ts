import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { useTestApp } from '../helpers/app.js';
import { rawExchange, type RawResponse } from '../helpers/raw-http.js';
import { createProduct } from '../products/support.js';
import { useListeningApp } from './support.js';

/** Our one error shape, with the headers every error carries. */
function expectShape(res: RawResponse, status: number, code: string) {
  assert.equal(res.status, status, res.raw);
  assert.match(res.headers['content-type'] ?? '', /^application\/json/, res.raw);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(body)
      .filter((k) => k !== 'details')
      .sort(),
    ['code', 'error', 'request_id', 'status'],
  );
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(res.headers['x-request-id'], body.request_id);
  assert.equal(res.headers['access-control-allow-origin'], '*');
}

describe('hardening: low-level HTTP errors answer our one error shape', () => {
  const t = useTestApp();
  const l = useListeningApp(t);
  const send = (...parts: string[]) => rawExchange(l.port, parts, { timeoutMs: 10_000 });

  it('a malformed request line is 400 invalid_request', async () => {
    for (const line of [
      'GARBAGE\r\n\r\n',
      'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
      'G@T / HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET / HTTP/1.1\r\nBad Header\r\n\r\n',
    ]) {
      expectShape(await send(line), 400, 'invalid_request');
    }
  });

  it('a header block over the limit is 431 headers_too_large', async () => {
    expectShape(
      await send(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      431,
      'headers_too_large',
    );
  });

  it('Content-Length together with Transfer-Encoding is 400 invalid_request', async () => {
    const res = await send(
      'POST /api/v1/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expectShape(res, 400, 'invalid_request');
    assert.match(JSON.parse(res.body).error as string, /Content-Length and Transfer-Encoding/);
  });

  it('an HTTP/1.1 request without Host is 400 invalid_request with a body', async () => {
    const res = await send('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectShape(res, 400, 'invalid_request');
    assert.match(JSON.parse(res.body).error as string, /Host/);
    // HTTP/1.0 has no Host requirement.
    const old = await send('GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(old.status, 200, old.raw);
  });

  it('a missing file under /docs/static/ is 404, not 405', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await t.app.inject({ method, url: '/docs/static/no-such-file.js' });
      assert.equal(res.statusCode, 404, res.body);
      if (method === 'GET') assert.equal(res.json<{ code: string }>().code, 'not_found');
    }
    // A real file there is still served.
    const css = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' });
    assert.equal(css.statusCode, 200);
  });

  it('GET /products/{id}/prices has a JSON Content-Type', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    for (const query of ['', '?interval=raw']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}/prices${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json/);
    }
  });

  it('a request arriving while the server closes is 503 in our shape', async () => {
    const app = await buildApp(t.rt);
    // Runs after the app's own preClose hooks, while the close waits for it.
    let res: RawResponse | undefined;
    app.addHook('preClose', async () => {
      res = await rawExchange((app.server.address() as AddressInfo).port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n']);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    await app.close();
    assert.ok(res);
    expectShape(res, 503, 'unavailable');
    assert.equal(res.headers.connection, 'close');
  });
});
