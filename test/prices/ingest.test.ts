import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, fieldsOf } from '../products/support.js';
import { at, catalogue, changesOf, ingest, ingestOk, latest, priceRows } from './ingest-support.js';

describe('POST /prices', () => {
  const t = useTestApp();

  it('records each item and returns it; the competitor comes from the listing when only it is sent', async () => {
    const c = await catalogue(t);
    const before = Date.now();
    const out = await ingestOk(t, c.headers, [
      { product_id: c.productId, price: 49.99, currency: 'eur' },
      {
        product_id: c.productId,
        competitor_id: c.competitorId,
        price: 45.5,
        currency: 'EUR',
        in_stock: true,
        observed_at: '2025-06-01T12:00:00+02:00',
      },
      {
        product_id: c.productId,
        listing_id: c.listingId,
        price: 0,
        currency: 'EUR',
        in_stock: false,
        observed_at: '2025-06-02T10:00:00.123Z',
      },
      {
        product_id: c.productId,
        listing_id: c.ownListingId,
        competitor_id: null,
        price: 99_999_999_999.9999,
        currency: 'EUR',
        in_stock: null,
      },
    ]);
    assert.deepEqual([out.created, out.failed], [4, 0]);
    const [own, comp, fromListing, big] = out.data.map((r) => r.observation!);
    assert.deepEqual(
      out.data.map((r) => [r.index, r.status]),
      [
        [0, 201],
        [1, 201],
        [2, 201],
        [3, 201],
      ],
    );
    assert.match(own!.id, /^obs_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    assert.equal(own!.object, 'price_observation');
    assert.deepEqual(
      [own!.competitor_id, own!.listing_id, own!.price, own!.currency, own!.in_stock, own!.source],
      [null, null, 49.99, 'EUR', null, 'api'],
    );
    const observedAt = Date.parse(own!.observed_at);
    assert.ok(observedAt >= before - 1 && observedAt <= Date.now() + 1, 'observed_at defaults to the request time');
    assert.equal(comp!.observed_at, '2025-06-01T10:00:00.000Z');
    assert.equal(comp!.in_stock, true);
    assert.deepEqual(
      [fromListing!.competitor_id, fromListing!.listing_id, fromListing!.price, fromListing!.in_stock],
      [c.competitorId, c.listingId, 0, false],
    );
    assert.equal(fromListing!.observed_at, '2025-06-02T10:00:00.123Z');
    assert.deepEqual([big!.competitor_id, big!.listing_id, big!.price], [null, c.ownListingId, 99_999_999_999.9999]);
    const stored = await t.rt.db.query<{ price: string; source: string }>(
      'select price::text as price, source from price_observations where account_id = $1 order by id',
      [c.accountId],
    );
    // Inserted in time order (src/prices/series-lock.ts: ids follow each series' arrival order), same instants in item order.
    assert.deepEqual(
      stored.rows.map((r) => r.price),
      ['45.5000', '0.0000', '49.9900', '99999999999.9999'],
    );
    assert.ok(stored.rows.every((r) => r.source === 'api'));
    // The series' latest: the competitor's is the listing's newer price.
    assert.equal((await latest(t, c.productId, c.competitorId))!.price, '0.0000');
    assert.equal((await latest(t, c.productId, null))!.price, '99999999999.9999');
  });

  it('answers under /v1 too', async () => {
    const c = await catalogue(t);
    const res = await ingest(
      t,
      c.headers,
      { observations: [{ product_id: c.productId, price: 1, currency: 'EUR' }] },
      {},
      '/v1',
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ created: number }>().created, 1);
  });

  it('reports each item of a mixed batch and records only the valid ones', async () => {
    const c = await catalogue(t);
    const other = await catalogue(t);
    const ok = { product_id: c.productId, price: 10, currency: 'EUR', observed_at: at(0) };
    const out = await ingestOk(t, c.headers, [
      ok, // 0: 201
      { product_id: other.productId, price: 10, currency: 'EUR' }, // 1: another account's product: 404
      { product_id: 'prod_00000000000000000000000000', price: 10, currency: 'EUR' }, // 2: no such product: 404
      { ...ok, competitor_id: other.competitorId }, // 3: another account's competitor: 404
      { ...ok, listing_id: other.listingId }, // 4: another account's listing: 404
      { ...ok, product_id: c.otherProductId, listing_id: c.listingId }, // 5: a listing of another product: 422
      { ...ok, competitor_id: c.competitor2Id, listing_id: c.listingId }, // 6: not the listing's competitor: 422
      { ...ok, competitor_id: null, listing_id: c.listingId }, // 7: own price on a competitor's listing: 422
      { ...ok, competitor_id: c.competitorId, listing_id: c.ownListingId }, // 8: competitor on our own listing: 422
      { price: -1, currency: 'XYZ', colour: 'red' }, // 9: several fields: 422
      'not an object', // 10: 422
      { ...ok, observed_at: new Date(Date.now() + 10 * 60_000).toISOString() }, // 11: 10 minutes ahead: 422
      { ...ok, observed_at: '1999-12-31T23:59:59Z' }, // 12: before 2000: 422
      { ...ok, observed_at: '2025-03-01T12:00:00' }, // 13: no offset: 422
      { ...ok, observed_at: new Date(Date.now() + 60_000).toISOString() }, // 14: 1 minute ahead (clock drift): 201
      { ...ok, competitor_id: other.competitorId, listing_id: other.listingId, product_id: other.productId }, // 15: all three foreign: 404
    ]);
    assert.deepEqual(
      out.data.map((r) => r.status),
      [201, 404, 404, 404, 404, 422, 422, 422, 422, 422, 422, 422, 422, 422, 201, 404],
    );
    assert.deepEqual([out.created, out.failed], [2, 14]);
    const fields = (i: number) => out.data[i]!.error!.details!.map((d) => d.field).sort();
    assert.deepEqual(fields(1), ['product_id']);
    assert.equal(out.data[1]!.error!.code, 'not_found');
    // Another account's product gets exactly the answer of one that never existed.
    assert.deepEqual(out.data[1]!.error, out.data[2]!.error);
    assert.deepEqual(fields(3), ['competitor_id']);
    assert.deepEqual(fields(4), ['listing_id']);
    assert.deepEqual(fields(5), ['listing_id']);
    assert.deepEqual(fields(6), ['competitor_id']);
    assert.match(out.data[6]!.error!.details![0]!.message, new RegExp(c.competitorId));
    assert.deepEqual(fields(7), ['competitor_id']);
    assert.deepEqual(fields(8), ['competitor_id']);
    assert.deepEqual(fields(9), ['colour', 'currency', 'price', 'product_id']);
    assert.deepEqual(fields(10), ['(body)']);
    assert.deepEqual([fields(11), fields(12), fields(13)], [['observed_at'], ['observed_at'], ['observed_at']]);
    assert.match(out.data[11]!.error!.details![0]!.message, /5 minutes/);
    assert.match(out.data[12]!.error!.details![0]!.message, /2000/);
    assert.deepEqual(fields(15), ['competitor_id', 'listing_id', 'product_id']);
    for (const r of out.data.filter((x) => x.status !== 201)) {
      assert.equal(r.observation, undefined);
      assert.equal(r.error!.code, r.status === 404 ? 'not_found' : 'validation_failed');
      // Nothing of the other account is revealed: its ids only ever appear as what was sent.
      for (const d of r.error!.details!)
        assert.doesNotMatch(d.message, new RegExp(`${other.productId}|${other.listingId}|${other.competitorId}`));
    }
    assert.deepEqual(await priceRows(t, c.accountId), { observations: 2, series: 1, changes: 0 });
    assert.deepEqual(await priceRows(t, other.accountId), { observations: 0, series: 0, changes: 0 });
  });

  it('a 1000-item batch with 3 invalid items records 997; atomic records nothing', async () => {
    const c = await catalogue(t);
    const observations: object[] = Array.from({ length: 1000 }, (_, i) => ({
      product_id: c.productId,
      competitor_id: i % 2 ? c.competitorId : null,
      price: 10 + (i % 7) / 100,
      currency: 'EUR',
      in_stock: i % 11 !== 0,
      observed_at: at(i),
    }));
    observations[10] = { ...observations[10], price: 1.23456 };
    observations[500] = { ...observations[500], currency: 'EURO' };
    observations[999] = { ...observations[999], in_stock: 'yes' };

    const atomic = expectError(await ingest(t, c.headers, { observations, atomic: true }), 422, 'validation_failed');
    assert.deepEqual(fieldsOf(atomic), [
      'observations[10].price',
      'observations[500].currency',
      'observations[999].in_stock',
    ]);
    assert.match(atomic.error, /3 item\(s\).*nothing was recorded/);
    assert.deepEqual(await priceRows(t, c.accountId), { observations: 0, series: 0, changes: 0 });

    const out = await ingestOk(t, c.headers, observations);
    assert.deepEqual([out.created, out.failed, out.data.length], [997, 3, 1000]);
    assert.deepEqual(
      out.data.filter((r) => r.status !== 201).map((r) => [r.index, r.status, r.error!.details!.map((d) => d.field)]),
      [
        [10, 422, ['price']],
        [500, 422, ['currency']],
        [999, 422, ['in_stock']],
      ],
    );
    assert.match(out.data[10]!.error!.details![0]!.message, /4 decimal places/);
    out.data.forEach((r, i) => {
      assert.equal(r.index, i);
      if (r.status === 201) assert.equal(r.observation!.observed_at, at(i));
    });
    const rows = await priceRows(t, c.accountId);
    assert.equal(rows.observations, 997);
    assert.equal(rows.series, 2);
    assert.ok(rows.changes > 0);
  });

  it('atomic: true refuses ids of other accounts with one 422 naming each, and records nothing', async () => {
    const c = await catalogue(t);
    const other = await catalogue(t);
    const err = expectError(
      await ingest(t, c.headers, {
        atomic: true,
        observations: [
          { product_id: c.productId, price: 1, currency: 'EUR' },
          { product_id: other.productId, price: 1, currency: 'EUR' },
          { product_id: c.productId, listing_id: other.listingId, price: 1, currency: 'EUR' },
        ],
      }),
      422,
      'validation_failed',
    );
    assert.deepEqual(fieldsOf(err), ['observations[1].product_id', 'observations[2].listing_id']);
    assert.match(err.details![0]!.message, /is not a product of this account/);
    assert.deepEqual(await priceRows(t, c.accountId), { observations: 0, series: 0, changes: 0 });
    // All valid: all recorded.
    const out = await ingestOk(t, c.headers, [{ product_id: c.productId, price: 1, currency: 'EUR' }], true);
    assert.equal(out.created, 1);
  });

  it('refuses a malformed envelope with 422, bad JSON with 400, other types with 415 and huge bodies with 413', async () => {
    const c = await catalogue(t);
    const item = { product_id: c.productId, price: 1, currency: 'EUR' };
    for (const [payload, field] of [
      [{ observations: [] }, 'observations'],
      [{}, 'observations'],
      [{ observations: 'x' }, 'observations'],
      [{ observations: { 0: item } }, 'observations'],
      [{ observations: Array.from({ length: 1001 }, () => item) }, 'observations'],
      [{ observations: [item], atomic: 'yes' }, 'atomic'],
      [{ observations: [item], atomic: 1 }, 'atomic'],
      [{ observations: [item], extra: true }, 'extra'],
      [[item], '(body)'],
      [null, '(body)'],
    ] as const) {
      const err = expectError(await ingest(t, c.headers, payload), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), [field], JSON.stringify(payload)?.slice(0, 80));
    }
    expectError(await ingest(t, c.headers, '{"observations": [{"product_id": '), 400, 'invalid_json');
    expectError(await ingest(t, c.headers, '{"observations": [], "__proto__": {"x": 1}}'), 400, 'invalid_json');
    expectError(
      await ingest(t, c.headers, 'observations', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
    const huge = JSON.stringify({ observations: [{ ...item, pad: 'x'.repeat(11 * 1024 * 1024) }] });
    expectError(await ingest(t, c.headers, huge), 413, 'payload_too_large');
    // 1000 items of ordinary size are far below the 10 MiB limit, 1 MiB items are above the default one.
    const big = {
      observations: Array.from({ length: 1000 }, (_, i) => ({
        ...item,
        observed_at: `2025-01-01T00:00:00.${String(i).padStart(3, '0')}+00:00`,
      })),
    };
    assert.ok(JSON.stringify(big).length > 100_000);
    assert.equal((await ingestOk(t, c.headers, big.observations)).created, 1000);
    const n = await priceRows(t, c.accountId);
    assert.equal(n.observations, 1000);
  });

  it('refuses absurd numbers and values of the wrong type per field, never coercing', async () => {
    const c = await catalogue(t);
    const base = { product_id: c.productId, price: 1, currency: 'EUR' };
    const cases: [Record<string, unknown>, string][] = [
      [{ price: 1e308 }, 'price'],
      [{ price: -0.01 }, 'price'],
      [{ price: 1.00001 }, 'price'],
      [{ price: 100_000_000_000 }, 'price'],
      [{ price: '12' }, 'price'],
      [{ price: null }, 'price'],
      [{ price: true }, 'price'],
      [{ price: [1] }, 'price'],
      [{ price: undefined }, 'price'],
      [{ currency: 'eu' }, 'currency'],
      [{ currency: 'XXY' }, 'currency'],
      [{ currency: 978 }, 'currency'],
      [{ in_stock: 'true' }, 'in_stock'],
      [{ in_stock: 1 }, 'in_stock'],
      [{ observed_at: 1_700_000_000 }, 'observed_at'],
      [{ observed_at: '2025-02-30T00:00:00Z' }, 'observed_at'],
      [{ observed_at: '2016-12-31T23:59:60Z' }, 'observed_at'],
      [{ observed_at: '9999-12-31T23:59:59Z' }, 'observed_at'],
      [{ observed_at: '0000-01-01T00:00:00Z' }, 'observed_at'],
      [{ observed_at: null }, 'observed_at'],
      [{ product_id: null }, 'product_id'],
      [{ product_id: 12 }, 'product_id'],
      [{ competitor_id: 12 }, 'competitor_id'],
      [{ competitor_id: c.productId }, 'competitor_id'],
      [{ listing_id: c.competitorId }, 'listing_id'],
      [{ source: 'scrape' }, 'source'],
      [{ id: 'obs_1' }, 'id'],
    ];
    const out = await ingestOk(
      t,
      c.headers,
      cases.map(([extra]) => ({ ...base, ...extra })),
    );
    out.data.forEach((r, i) => {
      assert.equal(r.status, 422, `${JSON.stringify(cases[i]![0])}: ${JSON.stringify(r)}`);
      assert.deepEqual(
        r.error!.details!.map((d) => d.field),
        [cases[i]![1]],
        JSON.stringify(cases[i]![0]),
      );
    });
    // -0 and 0 are zero; 4 decimals are fine.
    const fine = await ingestOk(t, c.headers, [
      { ...base, price: -0 },
      { ...base, price: 0.0001 },
      { ...base, price: 1234.5678 },
    ]);
    assert.deepEqual(
      fine.data.map((r) => r.observation!.price),
      [0, 0.0001, 1234.5678],
    );
    assert.equal((await priceRows(t, c.accountId)).observations, 3);
  });

  it('takes hostile strings as data: they fail as ids and come back only as sent', async () => {
    const c = await catalogue(t);
    const hostile = [
      "prod_x' or '1'='1",
      'prod_1; drop table price_observations;--',
      '<script>alert(1)</script>',
      'prod_\u0000',
      'prod_Ωmega',
      'prod_😀',
      'x'.repeat(10_000),
    ];
    const out = await ingestOk(
      t,
      c.headers,
      hostile.flatMap((s) => [
        { product_id: s, price: 1, currency: 'EUR' },
        { product_id: c.productId, competitor_id: s, price: 1, currency: 'EUR' },
        { product_id: c.productId, price: 1, currency: s },
        { product_id: c.productId, price: 1, currency: 'EUR', observed_at: s },
      ]),
    );
    assert.equal(out.created, 0);
    for (const r of out.data) {
      assert.equal(r.status, 422);
      assert.equal(r.error!.details!.length, 1);
    }
    assert.deepEqual(await priceRows(t, c.accountId), { observations: 0, series: 0, changes: 0 });
    const count = await t.rt.db.query<{ n: number }>('select count(*)::int as n from price_observations');
    assert.ok(count.rows[0]!.n >= 0, 'the table is still there');
  });

  it('Idempotency-Key: a retry replays the results and records nothing new; another body is a 409', async () => {
    const c = await catalogue(t);
    const payload = {
      observations: [
        { product_id: c.productId, price: 10, currency: 'EUR', observed_at: at(1) },
        { product_id: c.productId, price: 11, currency: 'EUR', observed_at: at(2) },
        { product_id: 'prod_missing', price: 11, currency: 'EUR', observed_at: at(3) },
      ],
    };
    const key = { 'idempotency-key': 'ingest-1' };
    const first = await ingest(t, c.headers, payload, key);
    assert.equal(first.statusCode, 200, first.body);
    const counts = await priceRows(t, c.accountId);
    assert.deepEqual(counts, { observations: 2, series: 1, changes: 1 });
    for (const prefix of ['/api/v1', '/v1']) {
      const again = await ingest(t, c.headers, payload, key, prefix);
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
    }
    assert.deepEqual(await priceRows(t, c.accountId), counts);
    const changed = await ingest(t, c.headers, { ...payload, atomic: false }, key);
    const err = expectError(changed, 409, 'conflict');
    assert.deepEqual(fieldsOf(err), ['Idempotency-Key']);
    // A refused atomic batch is not stored: the corrected request may reuse its key.
    const bad = { atomic: true, observations: [{ product_id: c.productId, price: -1, currency: 'EUR' }] };
    expectError(await ingest(t, c.headers, bad, { 'idempotency-key': 'ingest-2' }), 422, 'validation_failed');
    const fixed = await ingest(
      t,
      c.headers,
      { atomic: true, observations: [{ product_id: c.productId, price: 1, currency: 'EUR' }] },
      { 'idempotency-key': 'ingest-2' },
    );
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal(fixed.headers['idempotent-replayed'], undefined);
    assert.deepEqual(await priceRows(t, c.accountId), { ...counts, observations: 3, changes: 2 });
  });

  it('out-of-order arrival: an older observation goes into the history and moves neither latest nor changes', async () => {
    const c = await catalogue(t);
    const o = (hours: number, price: number) => ({
      product_id: c.productId,
      competitor_id: c.competitorId,
      price,
      currency: 'EUR',
      observed_at: at(hours),
    });
    await ingestOk(t, c.headers, [o(10, 20)]);
    await ingestOk(t, c.headers, [o(5, 15)]); // late
    assert.equal((await latest(t, c.productId, c.competitorId))!.price, '20.0000');
    assert.deepEqual(await changesOf(t, c.headers), []);
    await ingestOk(t, c.headers, [o(12, 22), o(8, 18), o(11, 21)]); // one batch, shuffled, two newer than the latest
    const l = await latest(t, c.productId, c.competitorId);
    assert.deepEqual([l!.price, l!.observed_at.toISOString()], ['22.0000', at(12)]);
    const changes = await changesOf(t, c.headers);
    assert.deepEqual(
      changes.map((ch) => [ch.old.price, ch.new.price, ch.old.observed_at, ch.new.observed_at]),
      [
        [21, 22, at(11), at(12)],
        [20, 21, at(10), at(11)],
      ],
    );
    // Same instant sent again later with another price: newer by arrival (id), so it is the latest.
    await ingestOk(t, c.headers, [o(12, 23)]);
    assert.equal((await latest(t, c.productId, c.competitorId))!.price, '23.0000');
    assert.equal((await changesOf(t, c.headers)).length, 3);
    // The history kept every raw observation.
    assert.equal((await priceRows(t, c.accountId)).observations, 6);
  });
});
