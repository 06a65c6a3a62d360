import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { CSV_PAGE_ROWS } from '../../src/prices/history/routes/export-price-history-csv.js';
import { account, competitor, insertObservations, type Headers } from './history-support.js';

describe('price history: CSV export', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let productId: string;
  let comp: string;

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    comp = await competitor(t, headers, '=HYPERLINK("http://evil.example","Shop, \u00fcber")');
    await insertObservations(t, accountId, productId, [
      { price: '10.5', at: '2025-03-01T10:00:00Z', inStock: true },
      { competitor: comp, price: '0.1', at: '2025-03-01T11:00:00Z' },
      { competitor: comp, price: '0.2', at: '2025-03-01T12:00:00Z', inStock: false },
    ]);
  });

  const csv = (query: string) =>
    t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices.csv?${query}`, headers });

  it('writes one row per bucket, empty ones included, with quoting and the formula guard', async () => {
    const res = await csv('from=2025-03-01T00:00:00Z&to=2025-03-03T00:00:00Z');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], `attachment; filename="${productId}-prices-day.csv"`);
    assert.equal(res.headers.etag, undefined, 'exports may stream: none carries an ETag (src/http/etag.ts)');
    assert.equal(
      res.body,
      'competitor_id,competitor_name,currency,start,end,open,close,min,max,average,count\r\n' +
        ',,EUR,2025-03-01T00:00:00.000Z,2025-03-02T00:00:00.000Z,10.5,10.5,10.5,10.5,10.5,1\r\n' +
        ',,EUR,2025-03-02T00:00:00.000Z,2025-03-03T00:00:00.000Z,,,,,,0\r\n' +
        `${comp},"'=HYPERLINK(""http://evil.example"",""Shop, \u00fcber"")",EUR,2025-03-01T00:00:00.000Z,2025-03-02T00:00:00.000Z,0.1,0.2,0.1,0.2,0.15,2\r\n` +
        `${comp},"'=HYPERLINK(""http://evil.example"",""Shop, \u00fcber"")",EUR,2025-03-02T00:00:00.000Z,2025-03-03T00:00:00.000Z,,,,,,0\r\n`,
    );
  });

  it('writes one row per observation with interval=raw, oldest first', async () => {
    const res = await csv('interval=raw&from=2025-03-01T00:00:00Z&to=2025-03-02T00:00:00Z&competitor_id=own');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-disposition'], `attachment; filename="${productId}-prices-raw.csv"`);
    const lines = res.body.split('\r\n');
    assert.equal(
      lines[0],
      'observed_at,competitor_id,competitor_name,listing_id,price,currency,in_stock,source,samples,price_sum,id',
    );
    assert.match(
      lines[1]!,
      /^2025-03-01T10:00:00\.000Z,,,,10\.5,EUR,true,api,1,10\.5,obs_[0-7][0-9a-hjkmnp-tv-z]{25}$/,
    );
    assert.equal(lines[2], '');
    assert.equal(lines.length, 3);
  });

  it('streams a raw export longer than one page, every row once', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    const n = CSV_PAGE_ROWS * 2 + 7;
    const start = Date.parse('2025-01-01T00:00:00Z');
    const rows = Array.from({ length: n }, (_, i) => ({
      price: `${i % 1000}.5`,
      at: new Date(start + Math.floor(i / 2) * 60_000).toISOString(),
    }));
    await insertObservations(t, a2, p2, rows);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/products/${p2}/prices.csv?interval=raw&from=2025-01-01T00:00:00Z&to=2025-01-31T00:00:00Z`,
      headers: h2,
    });
    assert.equal(res.statusCode, 200);
    const lines = res.body.trimEnd().split('\r\n').slice(1);
    assert.equal(lines.length, n);
    assert.equal(new Set(lines.map((l) => l.split(',').at(-1))).size, n);
    const times = lines.map((l) => l.split(',')[0]!);
    assert.deepEqual(times, [...times].sort());
  });

  it('answers an empty export with the header row only', async () => {
    const res = await csv('interval=raw&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
    assert.equal(res.statusCode, 200);
    assert.equal(
      res.body,
      'observed_at,competitor_id,competitor_name,listing_id,price,currency,in_stock,source,samples,price_sum,id\r\n',
    );
    const buckets = await csv('from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z');
    assert.equal(buckets.body, 'competitor_id,competitor_name,currency,start,end,open,close,min,max,average,count\r\n');
  });
});
