import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import type { ApiError, Product } from '../helpers/api-types.js';

/** Helpers shared by the products tests (not a test file itself: no `.test.ts`). */

export type Headers = Record<string, string>;

export const PREFIXES = ['/api/v1', '/v1'] as const;

export async function createProduct(
  t: TestApp,
  headers: Headers,
  body: Record<string, unknown> = {},
  prefix = '/api/v1',
) {
  const res = await t.app.inject({
    method: 'POST',
    url: `${prefix}/products`,
    headers,
    payload: { name: 'Widget', base_price: 10, currency: 'USD', ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Product>();
}

/** Products of an account, counted in the database itself. */
export async function countProducts(t: TestApp, accountId: string): Promise<number> {
  const r = await t.rt.db.query<{ n: number | string }>(
    'select count(*)::int as n from products where account_id = $1',
    [accountId],
  );
  return Number(r.rows[0]!.n);
}

/** Every row of an account, as the database holds it, for before/after comparisons. */
export async function snapshot(t: TestApp, accountId: string): Promise<unknown[]> {
  const r = await t.rt.db.query(
    `select id, name, brand, sku, category, description, base_price::text as base_price, currency, url,
            created_at, updated_at
       from products where account_id = $1 order by id`,
    [accountId],
  );
  return r.rows;
}

/** Asserts the standard error body and returns it. */
export function expectError(res: LightMyRequestResponse, status: number, code: string): ApiError {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json<ApiError>();
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(typeof body.error, 'string');
  assert.ok(body.error.length > 0);
  assert.equal(typeof body.request_id, 'string');
  assertNoLeaks(res.body);
  return body;
}

/** No stack traces, SQL or driver internals in a response body. */
export function assertNoLeaks(body: string) {
  for (const pattern of [
    /\bat .+:\d+:\d+/,
    /node_modules/,
    /\bselect\b.+\bfrom\b/i,
    /\binsert into\b/i,
    /\bupdate \w+ set\b/i,
    /syntax error at/i,
    /violates/i,
    /\bpg_/,
    /SQLSTATE/i,
    /stack/i,
  ]) {
    assert.doesNotMatch(body, pattern, `response leaks internals: ${body.slice(0, 500)}`);
  }
}

export function fieldsOf(body: ApiError): string[] {
  return (body.details ?? []).map((d) => d.field).sort();
}
