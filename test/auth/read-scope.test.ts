import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKey } from '../../src/auth/keys.js';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';

// design/API.md "API keys over HTTP": a `read` key may use GET and HEAD, `POST /alerts/preview`
// and `POST /extract` (they write nothing); anything else answers 403 `insufficient_scope`, and
// only full keys manage keys. The operations come from the OpenAPI document, so an operation
// added later is held to this the day it exists: a new POST is refused to read keys unless it
// is added to WRITES_NOTHING below (and declares `config.scope: 'read'`).

/** The operations besides GET and HEAD that a read key may call, under either prefix. */
const WRITES_NOTHING = ['POST /alerts/preview', 'POST /alerts/matches', 'POST /extract'];
/** Paths a read key may not even read. */
const FULL_ONLY_PATHS = ['/keys', '/keys/{id}'];

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Param {
  name: string;
  in: string;
  schema: { pattern?: string; format?: string };
}
interface Operation {
  security?: unknown[];
  parameters?: Param[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

/** A path parameter that passes its schema and names nothing (as test/hardening/unknown-input.test.ts). */
function sampleParam(p: Param | undefined): string {
  const prefix = /^\^([a-z]+_)/.exec(p?.schema.pattern ?? '')?.[1];
  if (prefix) return `${prefix}0zzz`;
  if (p?.schema.format === 'iso4217') return p.name === 'base' ? 'USD' : 'EUR';
  return 'x';
}

/** Rows of every table with an `account_id`, for this account: "nothing written" checked everywhere. */
async function accountRows(t: ReturnType<typeof useTestApp>, accountId: string): Promise<Record<string, number>> {
  const tables = await t.rt.db.query<{ table_name: string }>(
    `select table_name from information_schema.columns
      where column_name = 'account_id' and table_schema = current_schema() order by table_name`,
  );
  const out: Record<string, number> = {};
  for (const { table_name } of tables.rows) {
    const r = await t.rt.db.query<{ n: number }>(
      `select count(*)::int as n from "${table_name}" where account_id = $1`,
      [accountId],
    );
    out[table_name] = r.rows[0]!.n;
  }
  return out;
}

describe('read keys on every operation of the OpenAPI document', () => {
  const t = useTestApp();

  it('a read key is refused (403 insufficient_scope) everywhere but GET, HEAD, the alert preview and the dry run, and the keys; nothing is written', async () => {
    const full = await t.newKey('business');
    const read = await createKey(t.rt.db, { plan: 'business', scope: 'read', accountId: full.accountId });
    const headers = { authorization: `Bearer ${read.key}`, 'content-type': 'application/json' };
    // Something to read, so that GETs of lists have rows to answer with.
    const product = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: full.headers,
      payload: { name: 'Kettle', base_price: 10, currency: 'EUR' },
    });
    assert.equal(product.statusCode, 201);
    const before = await accountRows(t, full.accountId);
    assert.ok(Object.keys(before).length >= 8, `tables with account_id: ${Object.keys(before).join(', ')}`);

    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
    const seen = { refused: 0, allowed: 0, writesNothing: new Set<string>() };
    for (const [path, item] of Object.entries(doc.paths)) {
      const prefix = /^\/(api\/)?v1(?=\/)/.exec(path)?.[0];
      if (!prefix) continue;
      const bare = path.slice(prefix.length);
      for (const [m, op] of Object.entries(item)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(m)) continue;
        if (Array.isArray(op.security) && op.security.length === 0) continue; // public: the document itself
        const method = m.toUpperCase() as Method;
        const url = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
          sampleParam(op.parameters?.find((p) => p.in === 'path' && p.name === name)),
        );
        const fullOnly =
          FULL_ONLY_PATHS.includes(bare) || (method !== 'GET' && !WRITES_NOTHING.includes(`${method} ${bare}`));
        if (WRITES_NOTHING.includes(`${method} ${bare}`)) seen.writesNothing.add(`${method} ${bare}`);
        // The document says where a read key is refused; it must be what the server does.
        assert.equal(
          op.responses['403'] !== undefined,
          fullOnly,
          `${method} ${path}: 403 documented exactly where a read key gets it`,
        );

        // A body that would create something where the operation creates (and valid JSON anywhere).
        const payload =
          method === 'GET' || method === 'DELETE'
            ? undefined
            : JSON.stringify({ name: 'Sneaky', base_price: 1, currency: 'EUR' });
        for (const verb of method === 'GET' ? (['GET', 'HEAD'] as const) : [method]) {
          const res = await t.app.inject({ method: verb, url, headers, ...(payload === undefined ? {} : { payload }) });
          const what = `${verb} ${url}`;
          if (fullOnly) {
            if (verb === 'HEAD') assert.equal(res.statusCode, 403, what);
            else assert.match(expectError(res, 403, 'insufficient_scope').error, /read scope|full keys/, what);
            assert.equal(
              res.headers['www-authenticate'],
              'Bearer realm="pricehound", error="insufficient_scope", scope="full"',
              what,
            );
            seen.refused++;
          } else {
            assert.notEqual(res.statusCode, 403, `${what}: ${res.body.slice(0, 300)}`);
            assert.notEqual(res.statusCode, 401, what);
            seen.allowed++;
          }
        }
      }
    }
    assert.deepEqual(
      [...seen.writesNothing].sort(),
      [...WRITES_NOTHING].sort(),
      'the operations a read key may call all exist',
    );
    assert.ok(seen.refused > 40 && seen.allowed > 40, `refused ${seen.refused}, allowed ${seen.allowed}`);
    assert.deepEqual(await accountRows(t, full.accountId), before, 'nothing written by the read key');

    // The same key's reads work, and a full key of the account is not held back anywhere.
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/v1/products', headers })).json<{ data: unknown[] }>().data.length,
      1,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/products',
          headers: full.headers,
          payload: { name: 'Kettle 2', base_price: 10, currency: 'EUR' },
        })
      ).statusCode,
      201,
    );
  });
});
