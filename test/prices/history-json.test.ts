import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { before, describe, it } from 'node:test';
import { historyRange } from '../../src/prices/history/params.js';
import { PriceHistoryBucketsSchema } from '../../src/prices/history/schemas.js';
import { historyJson } from '../../src/prices/history/json.js';
import { type BucketRow, historyQuery, toSeries } from '../../src/prices/history/sql.js';
import { useTestApp } from '../helpers/app.js';
import { account, competitor, insertObservations, type Headers } from './history-support.js';

/**
 * The bucketed history's JSON is written as bytes from the statement's rows (historyJson), not
 * serialised from objects: it must be byte for byte what the response schema's serializer gives
 * for the same answer as objects (toSeries, numbers through Number): keys in the schema's order,
 * numbers as JavaScript writes them (trailing zeros dropped; a price of more than 15 significant
 * digits rounded as Number rounds it), null for an empty bucket. The ETag is the body's hash.
 */

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** `value` with its keys in the schema's order, as fast-json-stringify writes them. */
function ordered(value: unknown, schema: Schema): unknown {
  if (Array.isArray(value)) return value.map((v) => ordered(v, schema.items!));
  if (value === null || typeof value !== 'object' || !schema.properties) return value;
  const v = value as Record<string, unknown>;
  return Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, ordered(v[k], s)]));
}

describe('price history: the JSON text of buckets', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let productId: string;

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    const a = await competitor(t, headers, 'Shop "A", the first');
    const b = await competitor(t, headers, 'Shop B');
    await insertObservations(t, accountId, productId, [
      { price: '0', at: '2025-03-01T10:00:00Z' },
      { price: '0.0001', at: '2025-03-01T11:00:00Z' },
      { price: '10.50', at: '2025-03-03T09:30:00Z' },
      { price: '10', at: '2025-03-03T10:30:00Z' },
      { price: '10.01', at: '2025-03-03T23:59:59.999Z' },
      { price: '1234567890.1234', at: '2025-03-04T00:00:00Z' },
      { price: '999999999999999.9999', at: '2025-03-05T12:00:00Z' },
      { price: '123456789012345.6789', at: '2025-03-05T13:00:00Z' },
      { competitor: a, price: '19.99', at: '2025-03-02T08:00:00Z' },
      { competitor: a, price: '20.00', at: '2025-03-02T08:00:00Z' },
      { competitor: a, price: '7', currency: 'USD', at: '2025-03-06T08:00:00Z' },
      { competitor: b, price: '0.015', at: '2025-03-07T23:00:00Z' },
      { competitor: b, price: '0.02', at: '2025-03-07T23:30:00Z' },
      { competitor: b, price: '5.5', at: '2025-03-08T01:00:00Z' },
      { competitor: b, price: '5.50', at: '2025-03-08T02:00:00Z' },
    ]);
  });

  for (const query of [
    'interval=day&from=2025-02-27T00:00:00Z&to=2025-03-09T00:00:00Z',
    'interval=day&from=2025-02-27T00:00:00Z&to=2025-03-09T00:00:00Z&tz=Europe/Berlin',
    'interval=day&from=2025-02-27T00:00:00Z&to=2025-03-09T00:00:00Z&tz=Asia/Kolkata',
    'interval=hour&from=2025-03-03T00:00:00Z&to=2025-03-04T06:00:00Z',
    'interval=week&from=2025-02-01T00:00:00Z&to=2025-04-01T00:00:00Z&competitor_id=own',
    'interval=month&from=2025-05-01T00:00:00Z&to=2025-07-01T00:00:00Z',
  ])
    it(query, async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/products/${productId}/prices?${query}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers.etag, `W/"${crypto.createHash('sha1').update(res.body).digest('base64url')}"`);
      const params = Object.fromEntries(new URLSearchParams(query));
      const competitorIds = params.competitor_id === 'own' ? { competitor_id: ['own'] } : {};
      const range = historyRange({ ...params, ...competitorIds });
      assert.notEqual(range.interval, 'raw');
      if (range.interval === 'raw') return;
      const q = historyQuery({ ...range, interval: range.interval, productId, accountId });
      const rows = (await t.rt.db.query<BucketRow>(q.text, q.values)).rows;
      const answer = {
        object: 'price_history',
        product_id: productId,
        tz: range.tz,
        interval: range.interval,
        from: rows[0]!.range_start!.toISOString(),
        to: rows[0]!.range_end!.toISOString(),
        series: toSeries(rows),
      };
      assert.equal(res.body, JSON.stringify(ordered(answer, PriceHistoryBucketsSchema as Schema)));
    });

  it('writes the numbers as JavaScript does, long ones rounded as Number rounds them', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/products/${productId}/prices?interval=day&from=2025-03-01T00:00:00Z&to=2025-03-09T00:00:00Z`,
      headers,
    });
    assert.match(res.body, /"open":0,"close":0.0001,"min":0,"max":0.0001,"average":0.0001,"count":2\}/);
    assert.match(res.body, /"open":10.5,"close":10.01,"min":10,"max":10.5,"average":10.17,"count":3\}/);
    assert.match(res.body, /"open":1000000000000000,"close":123456789012345.67,"min":123456789012345.67,/);
    assert.match(res.body, /"average":0.0175,"count":2\}/);
    // One price all day: written once by the statement (utcDaysQuery), five times in the answer.
    assert.match(res.body, /"open":5.5,"close":5.5,"min":5.5,"max":5.5,"average":5.5,"count":2\}/);
    assert.match(res.body, /"open":1234567890.1234,"close":1234567890.1234,"min":1234567890.1234,/);
    assert.match(res.body, /"open":null,"close":null,"min":null,"max":null,"average":null,"count":0\}/);
  });

  it('writes random rows as the serializer writes their objects (UTC days and given bounds)', () => {
    let seed = 20261130;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const number = () =>
      [
        () => 'null',
        () => String(Math.floor(random() * 1000)),
        () => (random() * 1000).toFixed(2).replace(/\.?0+$/, ''),
        () => `${Math.floor(random() * 1e12)}.${String(Math.floor(random() * 1e4)).padStart(4, '0')}`,
        () => '999999999999999.9999',
      ][Math.floor(random() * 5)]!();
    // UTC days (numbered from 1970, so a range across it has negative ones) and given bounds.
    for (const [given, from] of [
      [false, '2025-01-01T00:00:00Z'],
      [false, '1969-12-10T00:00:00Z'],
      [true, '2025-01-01T00:00:00Z'],
    ] as const) {
      const days = 40;
      const start = new Date(from);
      const edges = Array.from({ length: days + 1 }, (_, n) =>
        new Date(start.getTime() + n * 86_400_000).toISOString(),
      );
      const base = given ? 0 : start.getTime() / 86_400_000 - 1;
      const rows: BucketRow[] = [
        {
          k: 0,
          product_id: 'p',
          range_start: start,
          range_end: new Date(edges[days]!),
          starts: given ? edges.slice(0, -1).join(',') : null,
          ends: given ? edges.slice(1).join(',') : null,
          competitor_id: null,
          competitor_name: null,
          currency: null,
          buckets: null,
        },
      ];
      for (const [competitor, currency] of [
        [null, 'EUR'],
        [crypto.randomUUID(), 'EUR'],
        [crypto.randomUUID(), 'USD'],
      ] as [string | null, string][]) {
        const fields: string[] = [];
        for (let n = 1; n <= days; n++) {
          if (random() < 0.3) continue;
          const open = number();
          if (random() < 0.4)
            fields.push(String(n + base), open, '', '', '', '', String(1 + Math.floor(random() * 40)));
          else
            fields.push(
              String(n + base),
              open,
              number(),
              number(),
              number(),
              number(),
              String(Math.floor(random() * 99)),
            );
        }
        if (fields.length === 0) fields.push(String(1 + base), '1', '', '', '', '', '1');
        rows.push({
          ...rows[0]!,
          k: 1,
          competitor_id: competitor,
          currency,
          buckets: fields.join(','),
          starts: null,
          ends: null,
        });
      }
      const series = (PriceHistoryBucketsSchema as Schema).properties!.series!;
      const want = `<${JSON.stringify(ordered(toSeries(rows), series))}>`;
      assert.equal(historyJson('<', rows, '>').toString('utf8'), want);
    }
  });
});
