import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import type { Page, Position, PositionSummary } from '../helpers/api-types.js';

/** Helpers of the positions tests (not a test file itself: no `.test.ts`). */

type PageJson = Page<Position>;

/** One page of GET /positions with `query`. */
export async function positionsPage(t: TestApp, headers: Headers, query = '', prefix = '/api/v1'): Promise<PageJson> {
  const res = await t.app.inject({ method: 'GET', url: `${prefix}/positions${query ? `?${query}` : ''}`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<PageJson>();
}

/** Every position of GET /positions with `query`, following the cursors 100 at a time (or `limit`). */
export async function allPositions(t: TestApp, headers: Headers, query = '', limit = 100): Promise<Position[]> {
  const out: Position[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const params = new URLSearchParams(query);
    params.set('limit', String(limit));
    if (cursor) params.set('cursor', cursor);
    const page = await positionsPage(t, headers, params.toString());
    out.push(...page.data);
    cursor = page.pagination.next_cursor;
    if (!page.pagination.has_more) return out;
  }
  throw new Error('too many pages');
}

export async function summary(t: TestApp, headers: Headers, query = ''): Promise<PositionSummary> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/positions/summary${query ? `?${query}` : ''}`,
    headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<PositionSummary>();
}

/** Observations through POST /prices (all or nothing). */
export async function postPrices(
  t: TestApp,
  headers: Headers,
  observations: {
    product_id: string;
    competitor_id?: string | null;
    price: number;
    currency?: string;
    in_stock?: boolean | null;
  }[],
) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/prices',
    headers,
    payload: { atomic: true, observations: observations.map((o) => ({ currency: 'EUR', ...o })) },
  });
  assert.equal(res.statusCode, 200, res.body);
}
