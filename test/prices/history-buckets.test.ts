import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { account, competitor, empty, history, insertObservations, one, type Headers } from './history-support.js';

describe('price history: buckets', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let productId: string;
  let compA: string;

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    compA = await competitor(t, headers, 'Shop A');
    // Out of order on purpose: the answer depends on observed_at, never on arrival.
    await insertObservations(t, accountId, productId, [
      { price: '13', at: '2025-03-30T21:30:00Z' }, // Berlin 23:30 CEST on 30 March
      { price: '12', at: '2025-03-30T22:30:00Z' }, // Berlin 00:30 on 31 March
      { price: '10', at: '2025-03-29T22:30:00Z' }, // Berlin 23:30 CET on 29 March
      { price: '11', at: '2025-03-29T23:30:00Z' }, // Berlin 00:30 on 30 March (the 23-hour day)
      { competitor: compA, price: '0.2', at: '2025-03-30T10:00:00Z' },
      { competitor: compA, price: '0.1', at: '2025-03-30T09:00:00Z' },
    ]);
  });

  it('Europe/Berlin: the spring-forward day is a 23-hour bucket, each observation in its local day', async () => {
    const h = await history(
      t,
      headers,
      productId,
      'from=2025-03-29T00:00:00%2B01:00&to=2025-04-01T00:00:00%2B02:00&tz=Europe/Berlin&competitor_id=own',
    );
    assert.equal(h.object, 'price_history');
    assert.equal(h.interval, 'day');
    assert.equal(h.tz, 'Europe/Berlin');
    assert.equal(h.from, '2025-03-28T23:00:00.000Z');
    assert.equal(h.to, '2025-03-31T22:00:00.000Z');
    assert.deepEqual(h.series, [
      {
        competitor_id: null,
        currency: 'EUR',
        buckets: [
          one('2025-03-28T23:00:00.000Z', '2025-03-29T23:00:00.000Z', 10),
          {
            start: '2025-03-29T23:00:00.000Z',
            end: '2025-03-30T22:00:00.000Z',
            open: 11,
            close: 13,
            min: 11,
            max: 13,
            average: 12,
            count: 2,
          },
          one('2025-03-30T22:00:00.000Z', '2025-03-31T22:00:00.000Z', 12),
        ],
      },
    ]);
  });

  it('UTC (the default zone) puts the same observations in other days', async () => {
    const h = await history(
      t,
      headers,
      productId,
      'from=2025-03-29T00:00:00Z&to=2025-04-01T00:00:00Z&competitor_id=own',
    );
    assert.equal(h.tz, 'UTC');
    assert.deepEqual(h.series[0]!.buckets, [
      {
        start: '2025-03-29T00:00:00.000Z',
        end: '2025-03-30T00:00:00.000Z',
        open: 10,
        close: 11,
        min: 10,
        max: 11,
        average: 10.5,
        count: 2,
      },
      {
        start: '2025-03-30T00:00:00.000Z',
        end: '2025-03-31T00:00:00.000Z',
        open: 13,
        close: 12,
        min: 12,
        max: 13,
        average: 12.5,
        count: 2,
      },
      empty('2025-03-31T00:00:00.000Z', '2025-04-01T00:00:00.000Z'),
    ]);
  });

  it('averages exactly in decimal: 0.1 and 0.2 average 0.15', async () => {
    const h = await history(
      t,
      headers,
      productId,
      `from=2025-03-30T00:00:00Z&to=2025-03-31T00:00:00Z&competitor_id=${compA}`,
    );
    assert.deepEqual(h.series, [
      {
        competitor_id: compA,
        currency: 'EUR',
        buckets: [
          {
            start: '2025-03-30T00:00:00.000Z',
            end: '2025-03-31T00:00:00.000Z',
            open: 0.1,
            close: 0.2,
            min: 0.1,
            max: 0.2,
            average: 0.15,
            count: 2,
          },
        ],
      },
    ]);
  });

  it('rounds the average half up to 4 decimals', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    await insertObservations(t, a2, p2, [
      { price: '0.0001', at: '2025-01-01T01:00:00Z' },
      { price: '0.0002', at: '2025-01-01T02:00:00Z' },
      { price: '0.1', at: '2025-01-02T01:00:00Z' },
      { price: '0.2', at: '2025-01-02T02:00:00Z' },
      { price: '0.2', at: '2025-01-02T03:00:00Z' },
      { price: '99999999999.9999', at: '2025-01-03T01:00:00Z' },
      { price: '99999999999.9998', at: '2025-01-03T02:00:00Z' },
    ]);
    const h = await history(t, h2, p2, 'from=2025-01-01T00:00:00Z&to=2025-01-04T00:00:00Z');
    assert.deepEqual(
      h.series[0]!.buckets.map((b) => b.average),
      [0.0002, 0.1667, 99999999999.9999],
    );
    assert.deepEqual(
      h.series[0]!.buckets.map((b) => b.min),
      [0.0001, 0.1, 99999999999.9998],
    );
  });

  it('America/New_York: 23-hour and 25-hour days around both DST changes', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    await insertObservations(t, a2, p2, [
      { price: '5', at: '2025-03-09T04:59:00Z' }, // 8 March 23:59 EST
      { price: '6', at: '2025-03-10T03:59:00Z' }, // 9 March 23:59 EDT
      { price: '7', at: '2025-11-03T04:30:00Z' }, // 2 November 23:30 EST (the 25-hour day)
      { price: '8', at: '2025-11-02T04:00:00Z' }, // 2 November 00:00 EDT
    ]);
    const spring = await history(t, h2, p2, 'from=2025-03-08T12:00:00Z&to=2025-03-10T12:00:00Z&tz=America/New_York');
    assert.deepEqual(spring.series[0]!.buckets, [
      one('2025-03-08T05:00:00.000Z', '2025-03-09T05:00:00.000Z', 5),
      one('2025-03-09T05:00:00.000Z', '2025-03-10T04:00:00.000Z', 6),
      empty('2025-03-10T04:00:00.000Z', '2025-03-11T04:00:00.000Z'),
    ]);
    const fall = await history(t, h2, p2, 'from=2025-11-02T04:00:00Z&to=2025-11-03T05:00:00Z&tz=America/New_York');
    assert.deepEqual(fall.series[0]!.buckets, [
      {
        start: '2025-11-02T04:00:00.000Z',
        end: '2025-11-03T05:00:00.000Z',
        open: 8,
        close: 7,
        min: 7,
        max: 8,
        average: 7.5,
        count: 2,
      },
    ]);
  });

  it('hour buckets over the Berlin fall-back day: 25 of them, absolute hours', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    await insertObservations(t, a2, p2, [
      { price: '1', at: '2025-10-26T00:15:00Z' }, // 02:15 CEST
      { price: '2', at: '2025-10-26T01:15:00Z' }, // 02:15 CET, the repeated local hour
    ]);
    const h = await history(
      t,
      h2,
      p2,
      'from=2025-10-25T22:00:00Z&to=2025-10-26T23:00:00Z&tz=Europe/Berlin&interval=hour',
    );
    const buckets = h.series[0]!.buckets;
    assert.equal(buckets.length, 25);
    assert.deepEqual(buckets[2], one('2025-10-26T00:00:00.000Z', '2025-10-26T01:00:00.000Z', 1));
    assert.deepEqual(buckets[3], one('2025-10-26T01:00:00.000Z', '2025-10-26T02:00:00.000Z', 2));
    assert.equal(
      buckets.reduce((n, b) => n + b.count, 0),
      2,
    );
    const day = await history(t, h2, p2, 'from=2025-10-26T12:00:00Z&to=2025-10-26T13:00:00Z&tz=Europe/Berlin');
    assert.equal(day.series[0]!.buckets[0]!.start, '2025-10-25T22:00:00.000Z');
    assert.equal(day.series[0]!.buckets[0]!.end, '2025-10-26T23:00:00.000Z'); // 25 hours
  });

  it('weeks start on Monday (ISO) and months follow the calendar in the zone', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    await insertObservations(t, a2, p2, [
      { price: '1', at: '2025-01-01T12:00:00Z' }, // a Wednesday
      { price: '3', at: '2025-01-05T22:59:00Z' }, // Sunday 23:59 in Berlin
      { price: '2', at: '2025-01-05T23:00:00Z' }, // Monday 00:00 in Berlin, Sunday in UTC
      { price: '4', at: '2025-02-28T23:30:00Z' }, // 1 March in Berlin
    ]);
    const weeks = await history(
      t,
      h2,
      p2,
      'from=2025-01-01T00:00:00Z&to=2025-01-08T00:00:00Z&interval=week&tz=Europe/Berlin',
    );
    assert.deepEqual(weeks.series[0]!.buckets, [
      {
        start: '2024-12-29T23:00:00.000Z',
        end: '2025-01-05T23:00:00.000Z',
        open: 1,
        close: 3,
        min: 1,
        max: 3,
        average: 2,
        count: 2,
      },
      one('2025-01-05T23:00:00.000Z', '2025-01-12T23:00:00.000Z', 2),
    ]);
    const utcWeeks = await history(t, h2, p2, 'from=2025-01-01T00:00:00Z&to=2025-01-08T00:00:00Z&interval=week');
    assert.deepEqual(
      utcWeeks.series[0]!.buckets.map((b) => [b.start, b.count]),
      [
        ['2024-12-30T00:00:00.000Z', 3],
        ['2025-01-06T00:00:00.000Z', 0],
      ],
    );
    const months = await history(
      t,
      h2,
      p2,
      'from=2025-01-15T00:00:00Z&to=2025-03-15T00:00:00Z&interval=month&tz=Europe/Berlin',
    );
    assert.deepEqual(months.series[0]!.buckets, [
      {
        start: '2024-12-31T23:00:00.000Z',
        end: '2025-01-31T23:00:00.000Z',
        open: 1,
        close: 2,
        min: 1,
        max: 3,
        average: 2,
        count: 3,
      },
      empty('2025-01-31T23:00:00.000Z', '2025-02-28T23:00:00.000Z'),
      one('2025-02-28T23:00:00.000Z', '2025-03-31T22:00:00.000Z', 4),
    ]);
  });

  it('gives a series whose currency changed one entry per currency, never mixing them', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    const c = await competitor(t, h2);
    await insertObservations(t, a2, p2, [
      { competitor: c, price: '10', currency: 'EUR', at: '2025-05-01T10:00:00Z' },
      { competitor: c, price: '12', currency: 'USD', at: '2025-05-01T11:00:00Z' },
      { price: '9', at: '2025-05-02T11:00:00Z' },
    ]);
    const h = await history(t, h2, p2, 'from=2025-05-01T00:00:00Z&to=2025-05-03T00:00:00Z');
    assert.deepEqual(
      h.series.map((s) => [s.competitor_id, s.currency, s.buckets.map((b) => b.average)]),
      [
        [null, 'EUR', [null, 9]],
        [c, 'EUR', [10, null]],
        [c, 'USD', [12, null]],
      ],
    );
  });

  it('filters series: own, competitor ids repeated or comma-separated; an unknown or foreign id matches nothing', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    const [c1, c2] = [await competitor(t, h2, 'One'), await competitor(t, h2, 'Two')];
    const foreign = await competitor(t, headers, 'Not theirs');
    await insertObservations(t, a2, p2, [
      { price: '1', at: '2025-06-01T10:00:00Z' },
      { competitor: c1, price: '2', at: '2025-06-01T10:00:00Z' },
      { competitor: c2, price: '3', at: '2025-06-01T10:00:00Z' },
    ]);
    const ids = async (q: string) =>
      (await history(t, h2, p2, `from=2025-06-01T00:00:00Z&to=2025-06-02T00:00:00Z${q}`)).series.map(
        (s) => s.competitor_id,
      );
    assert.deepEqual(await ids(''), [null, ...[c1, c2].sort()]);
    assert.deepEqual(await ids('&competitor_id=own'), [null]);
    assert.deepEqual(await ids(`&competitor_id=${c2}`), [c2]);
    assert.deepEqual(await ids(`&competitor_id=${c1},own`), [null, c1]);
    assert.deepEqual(await ids(`&competitor_id=${c1}&competitor_id=${c2}`), [c1, c2].sort());
    assert.deepEqual(await ids(`&competitor_id=${foreign}`), []);
    assert.deepEqual(await ids('&competitor_id=comp_doesnotexist'), []);
  });

  it('answers a product without observations with no series, and the default range is the last 30 days', async () => {
    const { headers: h2, productId: p2 } = await account(t);
    const h = await history(t, h2, p2, '');
    assert.deepEqual(h.series, []);
    const span = Date.parse(h.to) - Date.parse(h.from);
    assert.ok(span >= 30 * 86_400_000 && span <= 32 * 86_400_000, `${h.from} .. ${h.to}`);
  });

  it('is the same under /v1, and carries an ETag that answers 304', async () => {
    const url = `/v1/products/${productId}/prices?from=2025-03-29T00:00:00Z&to=2025-04-01T00:00:00Z`;
    const res = await t.app.inject({ method: 'GET', url, headers });
    assert.equal(res.statusCode, 200);
    assert.ok(res.headers.etag);
    const again = await t.app.inject({
      method: 'GET',
      url,
      headers: { ...headers, 'if-none-match': res.headers.etag as string },
    });
    assert.equal(again.statusCode, 304);
  });
});
