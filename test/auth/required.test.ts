import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEY_PREFIX, revokeKey } from '../../src/auth/keys.js';
import { useTestApp } from '../helpers/app.js';
import { rateHeaders } from '../ratelimit/support.js';

// API.md "Identity": `Authorization: Bearer <key>` on every /api/v1 and /v1 route; a missing,
// malformed, unknown or revoked key is a 401 with `WWW-Authenticate: Bearer` and the JSON error
// body. The routes come from the OpenAPI document, so a route added later is covered too.

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type Operation = { security?: unknown[] };

/**
 * Every API route (method, concrete path) that the OpenAPI document lists, except those it
 * declares public with `security: []` (the document itself); those are returned separately.
 */
async function apiRoutes(t: ReturnType<typeof useTestApp>): Promise<[Method, string][]> {
  return (await documentedRoutes(t)).secured;
}

async function documentedRoutes(t: ReturnType<typeof useTestApp>) {
  const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json<{
    paths: Record<string, Record<string, Operation>>;
  }>();
  const secured: [Method, string][] = [];
  const open: [Method, string][] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!/^\/(api\/)?v1\//.test(path)) continue;
    const concrete = path.replace(/\{[^}]+\}/g, 'prod_0000000000000000');
    for (const [m, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(m)) continue;
      (Array.isArray(op.security) && op.security.length === 0 ? open : secured).push([
        m.toUpperCase() as Method,
        concrete,
      ]);
    }
  }
  return { secured, open };
}

function assert401(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  what: string,
  method: Method,
  failureLimit: number,
) {
  assert.equal(res.statusCode, 401, `${what}: ${res.body.slice(0, 300)}`);
  assert.match(String(res.headers['www-authenticate']), /^Bearer( |$)/, `${what}: WWW-Authenticate`);
  // The rate-limit headers describe the address's failed-authentication budget, never a key
  // (test/auth/failed-attempts.test.ts checks their values).
  assert.equal(
    rateHeaders(res.headers as never).limit,
    failureLimit,
    `${what}: X-RateLimit-Limit is the failure budget`,
  );
  if (method === 'HEAD') return;
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'request_id', 'status'], what);
  assert.equal(body.status, 401);
  assert.equal(body.code, 'unauthorized');
  assert.ok(typeof body.error === 'string' && body.error.length > 0);
  assert.equal(body.request_id, res.headers['x-request-id'], `${what}: request_id matches X-Request-Id`);
}

describe('authentication on every API route', () => {
  const t = useTestApp();

  it('the OpenAPI document lists the routes this test walks', async () => {
    const routes = (await apiRoutes(t)).map(([m, p]) => `${m} ${p}`);
    for (const prefix of ['/api/v1', '/v1']) {
      for (const r of [
        'GET /products',
        'POST /products',
        'POST /products/batch',
        'GET /products/prod_0000000000000000',
        'PUT /products/prod_0000000000000000',
        'PATCH /products/prod_0000000000000000',
        'DELETE /products/prod_0000000000000000',
        'GET /usage',
      ]) {
        const [m, p] = r.split(' ');
        assert.ok(routes.includes(`${m} ${prefix}${p}`), `${m} ${prefix}${p} is listed`);
      }
    }
  });

  it('refuses missing, wrong-scheme, malformed, unknown and revoked keys with 401 on every route', async () => {
    const valid = await t.newKey('free');
    const revoked = await t.newKey('free');
    await revokeKey(t.rt.db, revoked.keyId);
    const unknown = KEY_PREFIX + 'A'.repeat(43);

    const credentials: [string, string | undefined][] = [
      ['missing header', undefined],
      ['empty header', ''],
      ['Basic scheme', 'Basic dXNlcjpwYXNz'],
      ['Token scheme with a valid key', `Token ${valid.key}`],
      ['valid key without a scheme', valid.key],
      ['Bearer without a key', 'Bearer'],
      ['Bearer with two tokens', `Bearer ${valid.key} extra`],
      ['key without the prefix', `Bearer ${valid.key.slice(KEY_PREFIX.length)}`],
      ['truncated key', `Bearer ${valid.key.slice(0, -1)}`],
      ['key with a bad character', `Bearer ${valid.key.slice(0, -1)}!`],
      ['unknown key', `Bearer ${unknown}`],
      ['revoked key', `Bearer ${revoked.key}`],
    ];

    const routes = await apiRoutes(t);
    const withHead: [Method, string][] = [
      ...routes,
      ...routes.filter(([m]) => m === 'GET').map(([, p]) => ['HEAD', p] as [Method, string]),
    ];
    let checked = 0;
    for (const [method, url] of withHead) {
      for (const [name, authorization] of credentials) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (authorization !== undefined) headers.authorization = authorization;
        const body = ['POST', 'PUT', 'PATCH'].includes(method)
          ? { name: 'x', base_price: 1, currency: 'EUR', products: [] }
          : undefined;
        const res = await t.app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
        assert401(res, `${method} ${url} with ${name}`, method, t.rt.config.authFailureLimit);
        checked++;
      }
    }
    assert.ok(checked >= 16 * credentials.length);

    // The valid key itself works, on both prefixes.
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/products', headers: valid.headers })).statusCode,
      200,
    );
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/products', headers: valid.headers })).statusCode, 200);
  });

  it('accepts the Bearer scheme in any letter case (RFC 7235)', async () => {
    const k = await t.newKey('free');
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/products',
        headers: { authorization: `${scheme} ${k.key}` },
      });
      assert.equal(res.statusCode, 200, scheme);
    }
  });

  it('says why in the challenge: no error code without credentials, invalid_token for a bad key (RFC 6750)', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/products' });
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="pricehound"');
    const malformed = await t.app.inject({
      method: 'GET',
      url: '/api/v1/products',
      headers: { authorization: 'Basic abc' },
    });
    assert.equal(malformed.headers['www-authenticate'], 'Bearer realm="pricehound", error="invalid_request"');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/v1/products',
      headers: { authorization: `Bearer ${KEY_PREFIX}${'b'.repeat(43)}` },
    });
    assert.equal(bad.headers['www-authenticate'], 'Bearer realm="pricehound", error="invalid_token"');
  });

  it('checks the key before the body: a non-JSON or oversized body without a key is still a 401', async () => {
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    assert401(notJson, 'text/plain body', 'POST', t.rt.config.authFailureLimit);
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(t.rt.config.bodyLimit + 1) }),
    });
    assert401(big, 'oversized body', 'POST', t.rt.config.authFailureLimit);
  });

  it('leaves operational routes open, and only those the document declares open under the API prefixes', async () => {
    const { open } = await documentedRoutes(t);
    assert.deepEqual(
      open.map(([m, p]) => `${m} ${p}`).filter((r) => !/openapi\.json$/.test(r)),
      [],
      'only the OpenAPI document is public under /api/v1 and /v1',
    );
    for (const url of ['/healthz', '/readyz', '/api/v1/openapi.json']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['www-authenticate'], undefined, url);
    }
  });
});
