import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { KEY_PREFIX } from '../../src/auth/keys.js';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError } from '../products/support.js';
import { rateHeaders } from '../ratelimit/support.js';

// CORS (docs/API-DECISIONS.md, "CORS"): any origin may call the API with a key it holds.
// Preflights are answered 204 before authentication and routing, and every response, success or
// error, carries Access-Control-Allow-Origin: * and exposes the headers a client needs.

const ORIGIN = 'https://dashboard.example';
const EXPOSED = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'WWW-Authenticate',
];
const REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id'];
const FAILURE_LIMIT = 3;

const list = (v: unknown) =>
  String(v ?? '')
    .split(/\s*,\s*/)
    .filter((x) => x !== '')
    .map((x) => x.toLowerCase());

function assertCors(res: LightMyRequestResponse, what: string) {
  assert.equal(res.headers['access-control-allow-origin'], '*', `${what}: Access-Control-Allow-Origin`);
  const exposed = list(res.headers['access-control-expose-headers']);
  for (const h of EXPOSED)
    assert.ok(exposed.includes(h.toLowerCase()), `${what}: ${h} exposed (${exposed.join(', ')})`);
  // No credentials mode: the API authenticates with a header, never cookies.
  assert.equal(res.headers['access-control-allow-credentials'], undefined, `${what}: no credentials`);
}

describe('CORS', () => {
  const t = useTestApp({ AUTH_FAILURE_LIMIT: String(FAILURE_LIMIT) });
  let n = 0;
  const nextAddress = () => `127.0.9.${++n}`;

  const preflight = (url: string, method: string, remoteAddress = '127.0.0.1') =>
    t.app.inject({
      method: 'OPTIONS',
      url,
      remoteAddress,
      headers: {
        origin: ORIGIN,
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization,content-type,idempotency-key,if-none-match,x-request-id',
      },
    });

  it('answers a preflight for /api/v1/products/{id} from another origin with 204 and the allow headers, no key needed', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await preflight(`/api/v1/products/${p.id}`, method);
      assert.equal(res.statusCode, 204, `${method}: ${res.body}`);
      assert.equal(res.body, '');
      assertCors(res, `preflight ${method}`);
      assert.ok(list(res.headers['access-control-allow-methods']).includes(method.toLowerCase()), `${method} allowed`);
      const allowed = list(res.headers['access-control-allow-headers']);
      for (const h of REQUEST_HEADERS)
        assert.ok(allowed.includes(h.toLowerCase()), `${h} allowed (${allowed.join(', ')})`);
      assert.ok(Number(res.headers['access-control-max-age']) > 0, 'preflight may be cached');
      assert.ok(res.headers['x-request-id'], 'X-Request-Id on preflights too');
      // Not authenticated, so neither a 401 challenge nor anyone's rate-limit headers.
      assert.equal(res.headers['www-authenticate'], undefined);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
  });

  it('answers preflights on every path, before routing and authentication, and does not count them', async () => {
    const address = nextAddress();
    for (const url of [
      '/api/v1/products',
      '/v1/products/batch',
      '/api/v1/usage',
      '/healthz',
      '/api/v1/openapi.json',
      '/api/v1/no-such-path',
    ]) {
      for (let i = 0; i < FAILURE_LIMIT + 1; i++) {
        const res = await preflight(url, 'POST', address);
        assert.equal(res.statusCode, 204, `${url}: ${res.body}`);
        assertCors(res, url);
      }
    }
    // Plain OPTIONS (no Origin, as curl sends it) is answered the same way: never a 401 or a 405.
    const plain = await t.app.inject({ method: 'OPTIONS', url: '/api/v1/products', remoteAddress: address });
    assert.equal(plain.statusCode, 204);
    assertCors(plain, 'plain OPTIONS');
    // None of those counted as a failed authentication: the address still has its whole budget.
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress: address });
    assert.equal(first.statusCode, 401);
    assert.equal(rateHeaders(first.headers).remaining, FAILURE_LIMIT - 1);
  });

  it('the actual cross-origin request then works with the key, and its answer can be read', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/products/${p.id}`,
      headers: { ...headers, origin: ORIGIN },
      payload: { name: 'Renamed' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assertCors(res, 'PUT with Origin');
    assert.equal(res.json<{ name: string }>().name, 'Renamed');
  });

  it('is on every success answer', async () => {
    const { headers } = await t.newKey();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers,
      payload: { name: 'A', base_price: 1, currency: 'EUR' },
    });
    assert.equal(created.statusCode, 201);
    assertCors(created, '201');
    const id = created.json<{ id: string }>().id;
    const got = await t.app.inject({ method: 'GET', url: `/v1/products/${id}`, headers });
    assert.equal(got.statusCode, 200);
    assertCors(got, '200');
    const notModified = await t.app.inject({
      method: 'GET',
      url: `/v1/products/${id}`,
      headers: { ...headers, 'if-none-match': String(got.headers.etag) },
    });
    assert.equal(notModified.statusCode, 304);
    assertCors(notModified, '304');
    const usage = await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers });
    assert.equal(usage.statusCode, 200);
    assertCors(usage, 'usage');
    for (const url of ['/healthz', '/readyz', '/metrics', '/api/v1/openapi.json', '/docs/']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assertCors(res, url);
    }
    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${id}`, headers });
    assert.equal(deleted.statusCode, 204);
    assertCors(deleted, '204');
  });

  it('is on every error answer: 400, 401, 404, 405, 413, 415, 422, 429 and 500', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    const cases: [number, string, () => Promise<LightMyRequestResponse>][] = [
      [
        400,
        'invalid_json',
        () => t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: '{"name":' }),
      ],
      [400, 'invalid_request', () => t.app.inject({ method: 'GET', url: '/api/v1/products/%E0%A4%A', headers })], // raised before routing
      [
        401,
        'unauthorized',
        () => t.app.inject({ method: 'GET', url: '/api/v1/products', remoteAddress: nextAddress() }),
      ],
      [
        404,
        'not_found',
        () => t.app.inject({ method: 'GET', url: '/api/v1/products/prod_0000000000000000000000000000', headers }),
      ],
      [404, 'not_found', () => t.app.inject({ method: 'GET', url: '/no-such-path' })],
      [404, 'not_found', () => t.app.inject({ method: 'GET', url: `/api/v1/products/${'x'.repeat(300)}`, headers })], // before routing
      [405, 'method_not_allowed', () => t.app.inject({ method: 'POST', url: `/api/v1/products/${p.id}`, headers })],
      [
        413,
        'payload_too_large',
        () =>
          t.app.inject({
            method: 'POST',
            url: '/api/v1/products',
            headers,
            payload: JSON.stringify({ name: 'x'.repeat(t.rt.config.bodyLimit + 1) }),
          }),
      ],
      [
        415,
        'unsupported_media_type',
        () =>
          t.app.inject({
            method: 'POST',
            url: '/api/v1/products',
            headers: { ...headers, 'content-type': 'text/plain' },
            payload: 'x',
          }),
      ],
      [
        422,
        'validation_failed',
        () => t.app.inject({ method: 'POST', url: '/api/v1/products', headers, payload: { name: '' } }),
      ],
    ];
    for (const [status, code, send] of cases) {
      const res = await send();
      expectError(res, status, code);
      assertCors(res, `${status} ${code}`);
      assert.ok(res.headers['x-request-id'], `${status} ${code}: X-Request-Id`);
    }

    // 429 of an address over its failed-authentication budget.
    const address = nextAddress();
    let blocked: LightMyRequestResponse | undefined;
    for (let i = 0; i <= FAILURE_LIMIT; i++) {
      blocked = await t.app.inject({
        method: 'GET',
        url: '/api/v1/products',
        remoteAddress: address,
        headers: { authorization: `Bearer ${KEY_PREFIX}${'c'.repeat(43)}` },
      });
    }
    assert.equal(blocked!.statusCode, 429);
    assertCors(blocked!, '429');

    // 500: a failure nobody foresaw, in the middle of an authenticated request. The real
    // database fails the query (the table is briefly gone); nothing is stubbed.
    await t.rt.db.exec('alter table products rename to products_away');
    let failed: LightMyRequestResponse;
    try {
      failed = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    } finally {
      await t.rt.db.exec('alter table products_away rename to products');
    }
    expectError(failed, 500, 'internal');
    assertCors(failed, '500');
  });
});
