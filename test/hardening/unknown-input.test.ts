import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf } from '../products/support.js';

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
}

interface Param {
  name: string;
  in: string;
  schema: { pattern?: string; format?: string };
}
type Doc = {
  paths: Record<string, Record<string, { requestBody?: unknown; parameters?: Param[]; security?: unknown[] }>>;
};

/** A path parameter that passes its schema and names nothing: `prod_0zzz`, or a currency code. */
function sampleParam(p: Param | undefined): string {
  const prefix = /^\^([a-z]+_)/.exec(p?.schema.pattern ?? '')?.[1];
  if (prefix) return `${prefix}0zzz`;
  if (p?.schema.format === 'iso4217') return p.name === 'base' ? 'USD' : 'EUR';
  return 'x';
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Every operation of the OpenAPI document that takes input, path parameters filled with a made-up
 * id. The public probes (`security: []`: health, readiness, metrics, the document) take none and
 * answer any query alike (test/openapi/contract.test.ts checks it).
 */
function operationsOf(doc: Doc): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m, op]) => METHODS.includes(m) && !(Array.isArray(op.security) && op.security.length === 0))
      .map(([m, op]) => ({
        method: m.toUpperCase(),
        path: path.replace(/\{([^}]+)\}/g, (_, name: string) =>
          sampleParam(op.parameters?.find((p) => p.in === 'path' && p.name === name)),
        ),
        hasBody: op.requestBody !== undefined,
      })),
  );
}

describe('hardening: one rule for unknown query parameters and body fields, on every operation', () => {
  const t = useTestApp();

  it('refuses an unknown query parameter with 422 on every operation of the document', async () => {
    const { headers } = await t.newKey('business');
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
    const ops = operationsOf(doc);
    assert.ok(ops.length > 30, `only ${ops.length} operations`);
    for (const op of ops) {
      const res = await t.app.inject({
        method: op.method as never,
        url: `${op.path}?zzz_unknown=1`,
        headers,
        ...(op.hasBody ? { payload: '{}' } : {}),
      });
      const body = expectError(res, 422, 'validation_failed');
      assert.ok(fieldsOf(body).includes('zzz_unknown'), `${op.method} ${op.path}: ${res.body}`);
    }
  });

  it('refuses an unknown body field with 422 on every operation of the document, with or without a body schema', async () => {
    const { headers } = await t.newKey('business');
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
    for (const op of operationsOf(doc)) {
      if (op.method === 'GET') continue; // a GET body is never read: covered below for one
      const res = await t.app.inject({
        method: op.method as never,
        url: op.path,
        headers,
        payload: '{"zzz_unknown":1}',
      });
      const body = expectError(res, 422, 'validation_failed');
      assert.ok(
        fieldsOf(body).some((f) => f.endsWith('zzz_unknown')),
        `${op.method} ${op.path}: ${res.body}`,
      );
    }
  });

  it('a body on an operation that takes none: {} and no body are fine, anything else is 422', async () => {
    const { headers } = await t.newKey('business');
    const p = await createProduct(t, headers);
    for (const payload of [undefined, '', '{}']) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/products/${p.id}`,
        headers,
        ...(payload === undefined ? {} : { payload }),
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    for (const payload of ['[]', '1', '"x"', 'null', '{"name":"x"}']) {
      const res = await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${p.id}`, headers, payload });
      expectError(res, 422, 'validation_failed');
    }
    // Still there: nothing was deleted by a refused request.
    const get = await t.app.inject({ method: 'GET', url: `/api/v1/products/${p.id}`, headers });
    assert.equal(get.statusCode, 200);
    // And a known parameter still works where one is defined.
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/products?limit=5', headers });
    assert.equal(list.statusCode, 200);
  });
});
