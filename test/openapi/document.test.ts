import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { PLANS } from '../../src/auth/plans.js';
import { registeredRoutes } from '../../src/openapi/plugin.js';
import { useTestApp } from '../helpers/app.js';
import { deref, type Doc, fetchDocument, needsKey, type Obj, operations, toOpenApiPath } from './support.js';

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const API = /^\/(api\/)?v1\//;

describe('openapi: the document', () => {
  const t = useTestApp();
  let doc: Doc;
  before(async () => {
    doc = await fetchDocument(t.app);
  });

  it('is an OpenAPI 3.1 document with the bearer scheme required by default', () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    const info = doc.info as Obj;
    assert.equal(info.title, 'pricehound API');
    assert.equal(typeof info.version, 'string');
    assert.ok(Object.keys(doc.paths).length > 0);
    assert.deepEqual(
      doc.components.securitySchemes?.bearerAuth && {
        ...doc.components.securitySchemes.bearerAuth,
        description: undefined,
      },
      {
        type: 'http',
        scheme: 'bearer',
        description: undefined,
      },
    );
    assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
    // Relative to the document, so it names whichever deployment serves it (and "Try it out" works there).
    assert.deepEqual(
      (doc.servers as Obj[]).map((s) => s.url),
      ['/'],
    );
  });

  it('documents every route Fastify registered, with each of its methods, and nothing else', () => {
    const routes = registeredRoutes(t.app);
    assert.ok(routes.length > 0);
    const expected = new Set<string>();
    for (const { method, url } of routes) {
      // The interactive page and its assets are not part of the API (test/openapi/docs-page.test.ts),
      // nor are the dashboard's files (test/dashboard/static.test.ts).
      if (url === '/docs' || url.startsWith('/docs/')) continue;
      if (url === '/dashboard' || url.startsWith('/dashboard/')) continue;
      if (method === 'HEAD') {
        // Fastify answers HEAD for every GET; the document says so once, in info.description.
        assert.ok(
          routes.some((r) => r.method === 'GET' && r.url === url),
          `HEAD ${url} without a GET`,
        );
        continue;
      }
      expected.add(`${method.toLowerCase()} ${toOpenApiPath(url)}`);
    }
    const documented = new Set([...operations(doc)].map(({ method, path }) => `${method} ${path}`));
    assert.deepEqual(
      [...expected].filter((e) => !documented.has(e)),
      [],
      'registered but not documented',
    );
    assert.deepEqual(
      [...documented].filter((d) => !expected.has(d)),
      [],
      'documented but not registered',
    );
    for (const required of [
      'get /healthz',
      'get /readyz',
      'get /metrics',
      'get /api/v1/openapi.json',
      'get /api/v1/products',
      'get /v1/products',
    ]) {
      assert.ok(documented.has(required), required);
    }
  });

  it('gives every operation a unique operationId, the /v1 ones that of their /api/v1 twin plus V1Alias', () => {
    const ids = [...operations(doc)].map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const { path, method, op } of operations(doc)) {
      if (!path.startsWith('/v1/')) continue;
      const twin = doc.paths[`/api${path}`]?.[method];
      assert.ok(twin, `${method} ${path} has no /api twin`);
      assert.equal(op.operationId, `${twin.operationId}V1Alias`);
      assert.ok(op.summary && op.description, `${op.operationId} has a summary and a description`);
    }
  });

  it('needs a key on every /api/v1 and /v1 operation except the document itself; health, readiness, metrics and the unsubscribe link need none', () => {
    const publicOps = [...operations(doc)]
      .filter(({ op }) => !needsKey(doc, op))
      .map(({ method, path }) => `${method} ${path}`);
    assert.deepEqual(publicOps.sort(), [
      'get /api/v1/openapi.json',
      'get /email/unsubscribe',
      'get /healthz',
      'get /metrics',
      'get /readyz',
      'post /email/unsubscribe',
    ]);
  });

  it('declares 401, 429 and 500 with their bodies and headers, and the rate-limit headers, on every authenticated operation', () => {
    let checked = 0;
    for (const { path, method, op } of operations(doc)) {
      if (!API.test(path) || !needsKey(doc, op)) continue;
      checked++;
      const name = `${method} ${path}`;
      const responses = Object.fromEntries(Object.entries(op.responses).map(([s, r]) => [s, deref(doc, r)])) as Record<
        string,
        Obj
      >;
      for (const status of ['401', '429', '500']) assert.ok(responses[status], `${name}: ${status}`);
      const bodyOf = (status: string) =>
        deref<Obj>(doc, ((responses[status]!.content as Obj)['application/json'] as Obj).schema);
      const headersOf = (status: string) => Object.keys((responses[status]!.headers ?? {}) as Obj);
      assert.equal(bodyOf('401').title, 'Error', `${name}: 401 body`);
      assert.equal(bodyOf('500').title, 'Error', `${name}: 500 body`);
      assert.equal(bodyOf('429').title, 'RateLimitExceeded', `${name}: 429 body`);
      assert.ok(headersOf('401').includes('WWW-Authenticate'), `${name}: 401 WWW-Authenticate`);
      assert.ok(headersOf('429').includes('Retry-After'), `${name}: 429 Retry-After`);
      for (const [status, response] of Object.entries(responses)) {
        const headers = headersOf(status);
        assert.ok(headers.includes('X-Request-Id'), `${name} ${status}: X-Request-Id`);
        // On a 401 they describe the address's failed-authentication budget (src/auth/hook.ts).
        for (const h of RATE_LIMIT_HEADERS) assert.ok(headers.includes(h), `${name} ${status}: ${h}`);
        if (status >= '400') assert.ok(response.content, `${name} ${status}: an error body`);
        if (status >= '400' && status !== '429')
          assert.equal(bodyOf(status).title, 'Error', `${name} ${status}: the Error body`);
      }
    }
    assert.ok(checked >= 16, `checked ${checked} operations`);
  });

  it('documents Access-Control-Allow-Origin on every response of every operation, public ones and the 405 included', () => {
    let checked = 0;
    const responses = [...operations(doc)].flatMap(({ path, method, op }) =>
      Object.entries(op.responses).map(([s, r]) => [`${method} ${path} ${s}`, r] as const),
    );
    for (const [name, response] of [...responses, ['405', doc.components.responses?.MethodNotAllowed] as const]) {
      const headers = (deref<Obj>(doc, response).headers ?? {}) as Obj;
      const acao = deref<Obj>(doc, headers['Access-Control-Allow-Origin']);
      assert.ok(acao, `${name}: Access-Control-Allow-Origin`);
      assert.deepEqual((acao.schema as Obj).enum, ['*'], `${name}: any origin`);
      checked++;
    }
    assert.ok(checked > 100, `checked ${checked} responses`);
    assert.match(String((doc.info as Obj).description), /Access-Control-Allow-Origin/);
  });

  it("states each plan's hourly limit as the limiter applies it, and the plans of the Usage body", () => {
    const description = String((doc.info as Obj).description);
    for (const [plan, limit] of Object.entries(PLANS))
      assert.match(description, new RegExp(`\\b${plan} ${limit}\\b`), plan);
    const usage = deref<Obj>(doc, doc.components.schemas?.Usage);
    assert.deepEqual(
      ((usage.properties as Record<string, Obj>).plan!.enum as string[]).sort(),
      Object.keys(PLANS).sort(),
    );
  });

  it('describes the 429 body exactly as the spec lists it (part 7)', () => {
    const body = deref<Obj>(doc, doc.components.schemas?.RateLimitExceeded);
    const props = body.properties as Record<string, Obj>;
    assert.deepEqual(Object.keys(props).sort(), ['error', 'limit', 'remaining', 'reset', 'retry_after', 'status']);
    assert.deepEqual([...(body.required as string[])].sort(), Object.keys(props).sort());
    assert.equal(body.additionalProperties, false);
    assert.equal(props.error!.type, 'string');
    for (const f of ['status', 'retry_after', 'limit', 'remaining', 'reset'])
      assert.equal(props[f]!.type, 'integer', f);
    assert.equal(props.status!.minimum, 429);
    assert.equal(props.status!.maximum, 429);
    assert.equal(props.remaining!.maximum, 0);
  });

  it('documents the headers every GET, idempotent POST and create carries', () => {
    const params = (op: Obj) => ((op.parameters ?? []) as Obj[]).map((p) => deref<Obj>(doc, p));
    const headerNames = (r: unknown) => Object.keys((deref<Obj>(doc, r).headers ?? {}) as Obj);
    for (const { path, method, op } of operations(doc)) {
      const name = `${method} ${path}`;
      // CSV exports may stream: sent before their hash is known, they promise no ETag (src/http/etag.ts).
      if (method === 'get' && !path.endsWith('.csv')) {
        assert.ok(
          params(op).some((p) => p.in === 'header' && p.name === 'If-None-Match'),
          `${name}: If-None-Match`,
        );
        assert.ok(headerNames(op.responses['200']).includes('ETag'), `${name}: ETag on 200`);
        assert.ok(op.responses['304'], `${name}: 304`);
        assert.ok(headerNames(op.responses['304']).includes('ETag'), `${name}: ETag on 304`);
      } else {
        for (const r of Object.values(op.responses)) assert.ok(!headerNames(r).includes('ETag'), `${name}: no ETag`);
      }
      if (op.responses['201'])
        assert.ok(headerNames(op.responses['201']).includes('Location'), `${name}: Location on 201`);
      if (params(op).some((p) => p.name === 'Idempotency-Key'))
        assert.ok(op.responses['409'], `${name}: 409 of a reused Idempotency-Key`);
    }
    const idempotent = [
      'post /api/v1/products',
      'post /api/v1/products/batch',
      'post /v1/products',
      'post /v1/products/batch',
    ];
    for (const key of idempotent) {
      const [method, path] = key.split(' ') as [string, string];
      const op = doc.paths[path]![method]!;
      const param = params(op).find((p) => p.name === 'Idempotency-Key');
      assert.ok(param && param.in === 'header' && param.required !== true, `${key}: optional Idempotency-Key header`);
      const success = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
      assert.ok(headerNames(op.responses[success]).includes('Idempotent-Replayed'), `${key}: Idempotent-Replayed`);
    }
    const notAllowed = deref<Obj>(doc, doc.components.responses?.MethodNotAllowed);
    assert.ok(Object.keys(notAllowed.headers as Obj).includes('Allow'), '405 documents Allow');
  });

  it('requires a body wherever a route needs one, and only there (a webhook test or secret rotation takes none)', () => {
    const optional: string[] = [];
    for (const { path, method, op } of operations(doc)) {
      const body = op.requestBody as Obj | undefined;
      if (body && body.required === false) optional.push(`${method} ${path}`);
      else if (body) assert.equal(body.required, true, `${method} ${path}`);
    }
    assert.deepEqual(optional.filter((o) => o.includes('/api/v1/')).sort(), [
      'post /api/v1/webhooks/{id}/rotate-secret',
      'post /api/v1/webhooks/{id}/test',
    ]);
    assert.equal(optional.length, 4, 'and their /v1 aliases');
    assert.equal(JSON.stringify(doc).includes('x-optional-body'), false, 'the mark is not left in the document');
  });

  it('states every shape once: named schemas, headers and parameters are components', () => {
    for (const name of [
      'Product',
      'ProductCreate',
      'ProductUpdate',
      'ProductList',
      'Error',
      'RateLimitExceeded',
      'Usage',
    ]) {
      assert.ok(doc.components.schemas?.[name], `components.schemas.${name}`);
    }
    for (const name of [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
      'Access-Control-Allow-Origin',
      'Retry-After',
      'WWW-Authenticate',
      'ETag',
      'Allow',
    ]) {
      assert.ok(doc.components.headers?.[name], `components.headers.${name}`);
    }
    // No schema anywhere under paths carries a title: titled ones were all moved to components.
    const text = JSON.stringify(doc.paths);
    assert.ok(!text.includes('"title"'), 'an inline titled schema is left in paths');
  });

  it('is served with an ETag and answers If-None-Match with 304, without a key', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.match(String(first.headers['content-type']), /^application\/json/);
    const etag = first.headers.etag as string;
    assert.ok(etag);
    const again = await t.app.inject({
      method: 'GET',
      url: '/api/v1/openapi.json',
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
  });
});
