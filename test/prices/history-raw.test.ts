import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { account, competitor, insertObservations, type Headers, type Obs } from './history-support.js';
import type { PriceHistoryRaw } from '../helpers/api-types.js';

describe('price history: raw observations', () => {
  const t = useTestApp();
  let headers: Headers;
  let productId: string;
  let comp: string;
  const sent: Obs[] = [];

  before(async () => {
    let accountId: string;
    ({ headers, accountId, productId } = await account(t));
    comp = await competitor(t, headers);
    // 30 observations, newest first, several sharing an instant (ties are broken by id).
    for (let i = 29; i >= 0; i--) {
      const at = new Date(Date.parse('2025-02-01T00:00:00Z') + Math.floor(i / 3) * 3_600_000).toISOString();
      sent.push({ competitor: i % 2 ? comp : null, price: `${i}.25`, at });
    }
    await insertObservations(t, accountId, productId, sent);
  });

  const get = (query: string, h = headers, id = productId) =>
    t.app.inject({
      method: 'GET',
      url: `/api/v1/products/${id}/prices?interval=raw&from=2025-02-01T00:00:00Z&to=2025-02-02T00:00:00Z&${query}`,
      headers: h,
    });

  it('pages through every observation oldest first, without overlap or gap', async () => {
    const seen: PriceHistoryRaw['data'] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<PriceHistoryRaw>();
      assert.equal(page.interval, 'raw');
      assert.ok(page.data.length <= 7);
      seen.push(...page.data);
      cursor = page.pagination.next_cursor;
      assert.equal(page.pagination.has_more, cursor !== null);
      pages++;
    } while (cursor);
    assert.equal(pages, 5);
    assert.equal(seen.length, 30);
    assert.equal(new Set(seen.map((o) => o.id)).size, 30);
    const order = [...seen].sort((a, b) => a.observed_at.localeCompare(b.observed_at));
    assert.deepEqual(seen, order);
    assert.deepEqual(
      seen.map((o) => o.price).sort((a, b) => a - b),
      sent.map((o) => Number(o.price)).sort((a, b) => a - b),
    );
    const first = seen[0]!;
    assert.match(first.id, /^obs_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    assert.equal(first.samples, 1);
    assert.equal(first.price_sum, first.price);
    assert.equal(first.source, 'api');
  });

  it('filters raw observations by series and defaults to pages of 100', async () => {
    const res = await get(`competitor_id=${comp}`);
    const page = res.json<PriceHistoryRaw>();
    assert.equal(page.pagination.limit, 100);
    assert.equal(page.data.length, 15);
    assert.ok(page.data.every((o) => o.competitor_id === comp));
  });

  it('refuses a mangled cursor with 400', async () => {
    for (const cursor of [
      'nope',
      Buffer.from('["observed_at","x","1"]').toString('base64url'),
      Buffer.from('["-created_at","2025-01-01T00:00:00.000Z","1"]').toString('base64url'),
    ]) {
      const res = await get(`cursor=${cursor}`);
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json<{ details: { field: string }[] }>().details[0]!.field, 'cursor');
    }
  });

  it("answers 404 for another account's product and a missing one, as for every product", async () => {
    const other = await t.newKey();
    for (const [h, id] of [
      [other.headers, productId],
      [headers, 'prod_0000000000000000000000000000'],
    ] as const) {
      const res = await get('', h, id);
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json<{ code: string }>().code, 'not_found');
      const buckets = await t.app.inject({ method: 'GET', url: `/api/v1/products/${id}/prices`, headers: h });
      assert.equal(buckets.statusCode, 404);
      const csv = await t.app.inject({
        method: 'GET',
        url: `/api/v1/products/${id}/prices.csv?interval=raw`,
        headers: h,
      });
      assert.equal(csv.statusCode, 404);
      assert.match(String(csv.headers['content-type']), /application\/json/);
    }
  });
});
