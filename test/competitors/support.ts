import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import type { Competitor, Listing } from '../helpers/api-types.js';

/** Helpers shared by the competitors and listings tests (not a test file itself: no `.test.ts`). */

export type { Page } from '../helpers/api-types.js';

export async function createCompetitor(
  t: TestApp,
  headers: Headers,
  body: Record<string, unknown> = {},
  prefix = '/api/v1',
) {
  const res = await t.app.inject({
    method: 'POST',
    url: `${prefix}/competitors`,
    headers,
    payload: { name: 'Rival', website: 'https://www.rival.example/', ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Competitor>();
}

export async function createListing(t: TestApp, headers: Headers, body: Record<string, unknown>, prefix = '/api/v1') {
  const res = await t.app.inject({ method: 'POST', url: `${prefix}/listings`, headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Listing>();
}

/** GET that must answer 200; returns the parsed body. */
export async function getJson<T>(t: TestApp, headers: Headers, url: string): Promise<T> {
  const res = await t.app.inject({ method: 'GET', url, headers });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json<T>();
}

/**
 * Writes a listing's state as a finished check would (src/checks records it in the worker):
 * the API itself never writes these columns, so tests put them in place directly.
 */
export async function setListingState(
  t: TestApp,
  listingId: string,
  state: {
    price?: number | null;
    currency?: string | null;
    in_stock?: boolean | null;
    status?: string;
    checked_at?: Date;
    error?: string | null;
    failures?: number;
  },
) {
  await t.rt.db.query(
    `update listings set last_price = $2::numeric, last_currency = $3, in_stock = $4, status = $5,
            last_checked_at = $6, last_success_at = case when $2::numeric is null then last_success_at else $6 end,
            last_error = $7, consecutive_failures = $8
      where id = $1`,
    [
      listingId,
      state.price === undefined || state.price === null ? null : String(state.price),
      state.currency ?? null,
      state.in_stock ?? null,
      state.status ?? (state.price === undefined || state.price === null ? 'failing' : 'ok'),
      state.checked_at ?? new Date(),
      state.error ?? null,
      state.failures ?? 0,
    ],
  );
}

/** Rows of a table that belong to an account, as the database holds them, for before/after comparisons. */
export async function rowsOf(
  t: TestApp,
  table: 'competitors' | 'listings' | 'price_observations',
  accountId: string,
): Promise<unknown[]> {
  const r = await t.rt.db.query(`select * from ${table} where account_id = $1 order by id`, [accountId]);
  return r.rows.map((row) => JSON.parse(JSON.stringify(row)) as unknown);
}
