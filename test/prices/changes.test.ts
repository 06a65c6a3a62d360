import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf, type Headers } from '../products/support.js';
import { at, catalogue, changesOf, ingestOk } from './ingest-support.js';
import type { PriceChange } from '../helpers/api-types.js';

describe('GET /price-changes', () => {
  const t = useTestApp();
  const getPage = (headers: Headers, query: string) =>
    t.app.inject({ method: 'GET', url: `/api/v1/price-changes?${query}`, headers });

  it('a run of observations in one batch gives one change per step, with exact amounts', async () => {
    const c = await catalogue(t);
    const o = (hours: number, price: number, extra: object = {}) => ({
      product_id: c.productId,
      listing_id: c.listingId,
      price,
      currency: 'EUR',
      in_stock: true,
      observed_at: at(hours),
      ...extra,
    });
    const out = await ingestOk(t, c.headers, [
      o(0, 10.1), // first of the series: not a change
      o(1, 10.2), // +0.1
      o(2, 10.2), // same: no change
      o(3, 10.2, { in_stock: false }), // stock only
      o(4, 0, { in_stock: false }), // to zero
      o(5, 0.3, { in_stock: false }), // from zero: no percentage
      o(6, 0.3, { currency: 'USD', in_stock: false }), // currency: no amount
    ]);
    const ids = out.data.map((r) => r.observation!.id);
    const changes = await changesOf(t, c.headers);
    assert.equal(changes.length, 5);
    const [toUsd, fromZero, toZero, stock, up] = changes;
    assert.match(up!.id, /^pchg_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    assert.equal(up!.object, 'price_change');
    assert.deepEqual(
      { ...up!, id: undefined, created_at: undefined },
      {
        id: undefined,
        object: 'price_change',
        product_id: c.productId,
        competitor_id: c.competitorId,
        listing_id: c.listingId,
        observation_id: ids[1],
        old: { price: 10.1, currency: 'EUR', in_stock: true, observed_at: at(0) },
        new: { price: 10.2, currency: 'EUR', in_stock: true, observed_at: at(1) },
        change: { amount: 0.1, percent: 0.99 },
        source: 'api',
        sequence: 1,
        created_at: undefined,
      },
    );
    // Numbered within the series, one more per change (newest first here).
    assert.deepEqual(
      changes.map((ch) => ch.sequence),
      [5, 4, 3, 2, 1],
    );
    assert.deepEqual(stock!.change, { amount: 0, percent: 0 });
    assert.deepEqual([stock!.old.in_stock, stock!.new.in_stock, stock!.observation_id], [true, false, ids[3]]);
    assert.deepEqual(toZero!.change, { amount: -10.2, percent: -100 });
    assert.deepEqual(fromZero!.change, { amount: 0.3, percent: null });
    assert.equal(toUsd!.change, null);
    assert.deepEqual([toUsd!.old.currency, toUsd!.new.currency], ['EUR', 'USD']);
    // Newest first, ids growing with time.
    const numeric = changes.map((ch) => Number(ch.id.slice(5)));
    assert.deepEqual(
      numeric,
      [...numeric].sort((a, b) => b - a),
    );
  });

  it('amounts and percentages are exact decimals, never float artefacts', async () => {
    const c = await catalogue(t);
    const o = (hours: number, price: number) => ({
      product_id: c.productId,
      price,
      currency: 'EUR',
      observed_at: at(hours),
    });
    await ingestOk(t, c.headers, [o(0, 0.1), o(1, 0.3), o(2, 99_999_999_999.9999), o(3, 0.0001), o(4, 3)]);
    const changes = await changesOf(t, c.headers);
    assert.deepEqual(
      changes.map((ch) => ch.change),
      [
        { amount: 2.9999, percent: 2999900 },
        { amount: -99_999_999_999.9998, percent: -100 },
        { amount: 99_999_999_999.6999, percent: 33_333_333_333_233.3 },
        { amount: 0.2, percent: 200 },
      ],
    );
  });

  it('filters by product, competitor (own for ours) and observation time, and pages with a cursor', async () => {
    const c = await catalogue(t);
    const series = (extra: object, start: number) =>
      Array.from({ length: 6 }, (_, i) => ({
        product_id: c.productId,
        price: 10 + i,
        currency: 'EUR',
        observed_at: at(start + i),
        ...extra,
      }));
    await ingestOk(t, c.headers, [
      ...series({}, 0),
      ...series({ competitor_id: c.competitorId }, 100),
      ...series({ competitor_id: c.competitor2Id }, 200),
      ...series({ product_id: c.otherProductId }, 300),
    ]);
    const all = await changesOf(t, c.headers);
    assert.equal(all.length, 20);
    const ids = (list: PriceChange[]) => list.map((ch) => ch.id);
    assert.deepEqual(
      ids(await changesOf(t, c.headers, `&product_id=${c.otherProductId}`)),
      ids(all.filter((ch) => ch.product_id === c.otherProductId)),
    );
    const own = await changesOf(t, c.headers, `&competitor_id=own&product_id=${c.productId}`);
    assert.equal(own.length, 5);
    assert.ok(own.every((ch) => ch.competitor_id === null && ch.product_id === c.productId));
    assert.deepEqual(
      ids(await changesOf(t, c.headers, `&competitor_id=${c.competitor2Id}`)),
      ids(all.filter((ch) => ch.competitor_id === c.competitor2Id)),
    );
    // since inclusive, until exclusive, on the new observation's time.
    const window = await changesOf(
      t,
      c.headers,
      `&since=${at(102)}&until=${encodeURIComponent('2025-03-05T09:00:00+01:00')}`,
    );
    // 09:00+01:00 is at(104), excluded.
    assert.deepEqual(
      window.map((ch) => ch.new.observed_at),
      [at(103), at(102)],
    );
    // Pages: no overlap, no gap, the same order as one big page.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await getPage(c.headers, `limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{
        data: PriceChange[];
        pagination: { next_cursor: string | null; has_more: boolean; limit: number };
      }>();
      assert.equal(page.pagination.limit, 7);
      assert.equal(page.pagination.has_more, page.pagination.next_cursor !== null);
      seen.push(...ids(page.data));
      cursor = page.pagination.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ids(all));
    const def = await t.app.inject({ method: 'GET', url: '/v1/price-changes', headers: c.headers });
    assert.equal(def.json<{ data: unknown[]; pagination: { limit: number } }>().pagination.limit, 20);
    assert.equal(def.json<{ data: unknown[] }>().data.length, 20);
  });

  it('another account sees none of the changes; its product or competitor as a filter is a 404', async () => {
    const c = await catalogue(t);
    const other = await catalogue(t);
    await ingestOk(t, other.headers, [
      { product_id: other.productId, competitor_id: other.competitorId, price: 1, currency: 'EUR', observed_at: at(0) },
      { product_id: other.productId, competitor_id: other.competitorId, price: 2, currency: 'EUR', observed_at: at(1) },
    ]);
    assert.equal((await changesOf(t, other.headers)).length, 1);
    assert.deepEqual(await changesOf(t, c.headers), []);
    const missing = await t.app.inject({
      method: 'GET',
      url: '/api/v1/price-changes?product_id=prod_000000000000',
      headers: c.headers,
    });
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/v1/price-changes?product_id=${other.productId}`,
      headers: c.headers,
    });
    expectError(missing, 404, 'not_found');
    expectError(foreign, 404, 'not_found');
    assert.equal(foreign.json<{ error: string }>().error, missing.json<{ error: string }>().error);
    expectError(
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/price-changes?competitor_id=${other.competitorId}`,
        headers: c.headers,
      }),
      404,
      'not_found',
    );
    // Its own product without changes: an empty page.
    assert.deepEqual(await changesOf(t, c.headers, `&product_id=${c.productId}&competitor_id=${c.competitorId}`), []);
  });

  it('refuses every bad parameter with a 422 naming it, and a forged cursor with a 400', async () => {
    const c = await catalogue(t);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1e1', 'limit'],
      ['limit=-1', 'limit'],
      ['product_id=nope', 'product_id'],
      [`product_id=${encodeURIComponent("prod_1' or 1=1--")}`, 'product_id'],
      ['competitor_id=ours', 'competitor_id'],
      [`competitor_id=${c.productId}`, 'competitor_id'],
      ['since=yesterday', 'since'],
      ['until=2025-01-01', 'until'],
      [`since=${at(5)}&until=${at(5)}`, 'since'],
      ['sort=id', 'sort'],
      ['colour=red', 'colour'],
      [`q=${encodeURIComponent('<script>')}`, 'q'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/price-changes?${query}`, headers: c.headers });
      const err = expectError(res, 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), [field], query);
    }
    const forged = [
      'garbage',
      Buffer.from(JSON.stringify(['-id', '1 or 1=1', 'x'])).toString('base64url'),
      Buffer.from(JSON.stringify(['-id', '99999999999999999999999', 'x'])).toString('base64url'),
      Buffer.from(JSON.stringify(['base,quote', 'EUR/USD', 'USD'])).toString('base64url'),
    ];
    for (const cursor of forged) {
      const err = expectError(
        await t.app.inject({ method: 'GET', url: `/api/v1/price-changes?cursor=${cursor}`, headers: c.headers }),
        400,
        'invalid_request',
      );
      assert.deepEqual(fieldsOf(err), ['cursor']);
    }
  });
});
