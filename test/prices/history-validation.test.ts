import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { account, type Headers } from './history-support.js';

describe('price history: every bad parameter is a 422 naming it', () => {
  const t = useTestApp();
  let headers: Headers;
  let productId: string;
  before(async () => {
    ({ headers, productId } = await account(t));
  });

  const cases: [string, string][] = [
    ['from=2025-02-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
    ['from=2025-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'],
    ['from=yesterday', 'from'],
    ['to=2025-13-01T00:00:00Z', 'to'],
    ['from=1900-01-01T00:00:00Z&to=1900-01-02T00:00:00Z', 'from'],
    ['from=9999-01-01T00:00:00Z&to=9999-01-02T00:00:00Z', 'from'],
    ['from=2020-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from'], // 5 years of days
    ['from=2025-01-01T00:00:00Z&to=2025-03-01T00:00:00Z&interval=hour', 'from'],
    ['from=1970-01-01T00:00:00Z&to=8999-01-01T00:00:00Z&interval=month', 'from'],
    ['interval=minute', 'interval'],
    ['interval=', 'interval'],
    ['tz=Mars/Olympus', 'tz'],
    ['tz=%2B03:00', 'tz'],
    ['tz=', 'tz'],
    ["tz=Europe/Berlin'--", 'tz'],
    ['competitor_id=', 'competitor_id[0]'],
    ['competitor_id=prod_123', 'competitor_id[0]'],
    ["competitor_id=comp_1'%20or%201=1", 'competitor_id[0]'],
    [`competitor_id=${Array.from({ length: 51 }, (_, i) => `comp_${i}`).join(',')}`, 'competitor_id'],
    ['limit=10', 'limit'],
    ['cursor=abc', 'cursor'],
    ['interval=raw&limit=0', 'limit'],
    ['interval=raw&limit=1001', 'limit'],
    ['interval=raw&limit=1.5', 'limit'],
    ['interval=raw&limit=-1', 'limit'],
    ['sort=price', 'sort'],
    ['<script>=1', '<script>'],
  ];

  for (const [query, field] of cases) {
    it(`${decodeURIComponent(query).slice(0, 80)} -> 422 on ${field}`, async () => {
      for (const path of ['prices', 'prices.csv']) {
        const q =
          path === 'prices.csv' && (field === 'limit' || field === 'cursor')
            ? query.replace(/^interval=raw&/, '')
            : query;
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/${path}?${q}`, headers });
        assert.equal(res.statusCode, 422, `${path}: ${res.body}`);
        const body = res.json<{ code: string; details: { field: string }[] }>();
        assert.equal(body.code, 'validation_failed');
        assert.ok(
          body.details.some((d) => d.field === field),
          `${path}: ${res.body}`,
        );
      }
    });
  }

  it('accepts the longest span of each interval, and time zone aliases answered by their canonical name', async () => {
    for (const [interval, days] of [
      ['raw', 366],
      ['hour', 31],
      ['day', 1100],
      ['week', 3660],
      ['month', 36_600],
    ] as const) {
      const from = Date.parse('1970-01-01T00:00:00Z');
      const to = new Date(from + days * 86_400_000).toISOString();
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/products/${productId}/prices?interval=${interval}&from=1970-01-01T00:00:00Z&to=${to}`,
        headers,
      });
      assert.equal(res.statusCode, 200, `${interval}: ${res.body}`);
    }
    // Twice each: the second answer comes from the names already looked up (src/time.ts).
    for (const [tz, canonical] of [
      ['europe/berlin', 'Europe/Berlin'],
      ['CET', 'Europe/Brussels'],
      ['europe/berlin', 'Europe/Berlin'],
      ['CET', 'Europe/Brussels'],
    ]) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices?tz=${tz}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json<{ tz: string }>().tz, canonical);
    }
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/products/${productId}/prices?tz=Mars/Olympus`,
      headers,
    });
    assert.equal(res.statusCode, 422, res.body);
  });
});
