import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson, type Page } from '../competitors/support.js';
import { useTestApp, type TestApp } from '../helpers/app.js';
import { createProduct, expectError, fieldsOf, type Headers } from '../products/support.js';
import type { Competitor, ListingBatchItem, ListingBatchResult } from '../helpers/api-types.js';

async function counts(t: TestApp, accountId: string) {
  const q = async (sql: string) => Number((await t.rt.db.query<{ n: number | string }>(sql, [accountId])).rows[0]!.n);
  return {
    listings: await q('select count(*)::int as n from listings where account_id = $1'),
    competitors: await q('select count(*)::int as n from competitors where account_id = $1'),
    listingEvents: await q(`select count(*)::int as n from events where account_id = $1 and type = 'listing.created'`),
    competitorEvents: await q(
      `select count(*)::int as n from events where account_id = $1 and type = 'competitor.created'`,
    ),
  };
}

const fieldsOfItem = (r: ListingBatchItem) => (r.error?.details ?? []).map((d) => d.field).sort();

describe('listings: batch create (POST /listings/batch)', () => {
  const t = useTestApp();

  const batch = (headers: Headers, payload: unknown, extra: Record<string, string> = {}, prefix = '/api/v1') =>
    t.app.inject({
      method: 'POST',
      url: `${prefix}/listings/batch`,
      headers: { ...headers, ...extra },
      payload: payload as object,
    });

  it('reports each item of a mixed batch, creates the valid ones, and finds or makes competitors by domain', async () => {
    const { headers, accountId } = await t.newKey();
    const other = await t.newKey();
    const kettle = await createProduct(t, headers, { sku: 'KT-1' });
    const toaster = await createProduct(t, headers, { sku: 'TS-1' });
    const rival = await createCompetitor(t, headers, { name: 'Rival', website: 'https://www.rival.example/' });
    const theirs = await createProduct(t, other.headers, { sku: 'THEIRS' });
    const theirRival = await createCompetitor(t, other.headers, { name: 'Theirs', website: 'https://theirs.example/' });
    const listed = await createListing(t, headers, {
      product_id: kettle.id,
      competitor_id: rival.id,
      url: 'https://rival.example/kettle',
    });
    const before = await counts(t, accountId);

    const listings = [
      { product_id: kettle.id, url: 'https://www.newshop.example/kettle' }, // 0: 201, competitor newshop.example created
      { product_sku: 'TS-1', url: 'https://newshop.example/toaster' }, // 1: 201, the same new competitor
      { product_sku: 'TS-1', url: 'https://rival.example/toaster' }, // 2: 201, the existing Rival (www. dropped)
      { product_id: toaster.id, url: 'https://eu.rival.example/toaster' }, // 3: 201, Rival again (parent domain)
      { product_id: kettle.id, url: 'https://elsewhere.example/k', competitor_id: rival.id }, // 4: 201, named competitor
      { product_id: kettle.id, url: 'https://rival.example/kettle' }, // 5: 409, already listed
      { product_id: kettle.id, url: 'https://www.newshop.example/kettle' }, // 6: 409, repeats item 0
      { product_id: theirs.id, url: 'https://x.example/a' }, // 7: 404, another account's product
      { product_id: kettle.id, url: 'https://x.example/b', competitor_id: theirRival.id }, // 8: 404, another account's competitor
      { product_sku: 'THEIRS', url: 'https://x.example/c' }, // 9: 404, another account's SKU
      { product_id: kettle.id, url: 'http://10.0.0.1/kettle' }, // 10: 422, private address
      { product_id: kettle.id, url: 'http://169.254.169.254/latest/meta-data/' }, // 11: 422, metadata address
      { product_id: kettle.id, url: 'http://localhost:8080/kettle' }, // 12: 422, loopback by name
      { product_id: kettle.id, product_sku: 'KT-1', url: 'https://x.example/d' }, // 13: 422, both
      { url: 'https://x.example/e' }, // 14: 422, neither
      { product_id: kettle.id, url: 'https://x.example/f', colour: 'red' }, // 15: 422, unknown field
      { product_id: kettle.id, url: 'ftp://x.example/g' }, // 16: 422, not http(s)
      'not an object', // 17: 422
      { product_id: 'prod_doesnotexist', url: 'https://x.example/h' }, // 18: 404
    ];
    const res = await batch(headers, { listings });
    assert.equal(res.statusCode, 200, res.body);
    const out = res.json<ListingBatchResult>();
    assert.deepEqual(
      out.data.map((r) => r.status),
      [201, 201, 201, 201, 201, 409, 409, 404, 404, 404, 422, 422, 422, 422, 422, 422, 422, 422, 404],
    );
    assert.deepEqual(
      out.data.map((r) => r.index),
      listings.map((_, i) => i),
    );
    assert.equal(out.created, 5);
    assert.equal(out.failed, 14);

    const [a, b, c, d, e] = out.data.slice(0, 5).map((r) => r.listing!);
    assert.equal(a!.product_id, kettle.id);
    assert.equal(b!.product_id, toaster.id);
    assert.notEqual(a!.competitor_id, rival.id);
    assert.equal(a!.competitor_id, b!.competitor_id, 'one competitor for newshop.example');
    assert.equal(c!.competitor_id, rival.id);
    assert.equal(d!.competitor_id, rival.id);
    assert.equal(e!.competitor_id, rival.id);
    assert.equal(a!.status, 'pending');
    assert.equal(a!.check_interval_seconds, 21_600);
    assert.deepEqual(a!.warnings, []);
    assert.equal(e!.warnings[0]?.code, 'domain_mismatch', 'a named competitor keeps the warning of POST /listings');
    const made = await getJson<Competitor>(t, headers, `/api/v1/competitors/${a!.competitor_id}`);
    assert.equal(made.name, 'newshop.example');
    assert.equal(made.domain, 'newshop.example');
    assert.equal(made.website, 'https://www.newshop.example/');

    assert.match(out.data[5]!.error!.details![0]!.message, new RegExp(listed.id));
    assert.equal(out.data[5]!.error!.code, 'conflict');
    assert.match(out.data[6]!.error!.details![0]!.message, /item 0/);
    assert.deepEqual(fieldsOfItem(out.data[7]!), ['product_id']);
    assert.deepEqual(fieldsOfItem(out.data[8]!), ['competitor_id']);
    assert.deepEqual(fieldsOfItem(out.data[9]!), ['product_sku']);
    for (const i of [7, 8, 9, 18]) {
      assert.equal(out.data[i]!.error!.code, 'not_found');
      assert.doesNotMatch(
        JSON.stringify(out.data[i]),
        /THEIRS|Theirs|theirs\.example/,
        'nothing about the other account',
      );
    }
    // The same answer for another account's id as for one that never existed.
    assert.deepEqual(out.data[7]!.error, out.data[18]!.error);
    assert.match(out.data[10]!.error!.details![0]!.message, /10\.0\.0\.1 is a private network address/);
    assert.match(out.data[11]!.error!.details![0]!.message, /cloud metadata/);
    assert.match(out.data[12]!.error!.details![0]!.message, /loopback/);
    assert.deepEqual(fieldsOfItem(out.data[13]!), ['product_id']);
    assert.deepEqual(fieldsOfItem(out.data[14]!), ['product_id']);
    assert.deepEqual(fieldsOfItem(out.data[15]!), ['colour']);
    assert.deepEqual(fieldsOfItem(out.data[16]!), ['url']);

    const after = await counts(t, accountId);
    assert.deepEqual(after, {
      listings: before.listings + 5,
      competitors: before.competitors + 1,
      listingEvents: before.listingEvents + 5,
      competitorEvents: before.competitorEvents + 1,
    });
    // The competitor's event comes before the listings that name it.
    const events = await t.rt.db.query<{ type: string }>(
      `select type from events where account_id = $1 and data->>'id' = any($2::text[]) order by id`,
      [accountId, [a!.competitor_id, ...[a, b, c, d, e].map((l) => l!.id)]],
    );
    assert.deepEqual(
      events.rows.map((r) => r.type),
      [
        'competitor.created',
        'listing.created',
        'listing.created',
        'listing.created',
        'listing.created',
        'listing.created',
      ],
    );
    // The other account is untouched.
    assert.equal((await counts(t, other.accountId)).listings, 0);
  });

  it('atomic: one bad item creates nothing, not even the competitors; every failure in one 422', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers, { sku: 'A-1' });
    const before = await counts(t, accountId);
    const res = await batch(headers, {
      atomic: true,
      listings: [
        { product_id: p.id, url: 'https://atomic.example/a' },
        { product_id: p.id, url: 'http://192.168.1.1/a' },
        { product_sku: 'NOPE', url: 'https://atomic.example/b' },
      ],
    });
    const err = expectError(res, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(err), ['listings[1].url']);
    assert.deepEqual(await counts(t, accountId), before);

    // A not-found found inside the transaction rolls everything back too.
    const res2 = await batch(headers, {
      atomic: true,
      listings: [
        { product_id: p.id, url: 'https://atomic.example/a' },
        { product_sku: 'NOPE', url: 'https://atomic.example/b' },
      ],
    });
    const err2 = expectError(res2, 422, 'validation_failed');
    assert.deepEqual(fieldsOf(err2), ['listings[1].product_sku']);
    assert.deepEqual(await counts(t, accountId), before);

    // Only conflicts: 409.
    await createListing(t, headers, {
      product_id: p.id,
      competitor_id: (await createCompetitor(t, headers)).id,
      url: 'https://rival.example/a',
    });
    const mid = await counts(t, accountId);
    const res3 = await batch(headers, {
      atomic: true,
      listings: [
        { product_id: p.id, url: 'https://atomic.example/c' },
        { product_id: p.id, url: 'https://rival.example/a' },
      ],
    });
    const err3 = expectError(res3, 409, 'conflict');
    assert.deepEqual(fieldsOf(err3), ['listings[1].url']);
    assert.deepEqual(await counts(t, accountId), mid);

    // All good: all created.
    const ok = await batch(headers, {
      atomic: true,
      listings: [
        { product_id: p.id, url: 'https://atomic.example/c' },
        { product_sku: 'A-1', url: 'https://atomic.example/d' },
      ],
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json<ListingBatchResult>().created, 2);
    assert.equal((await counts(t, accountId)).competitors, mid.competitors + 1);
  });

  it('refuses a malformed envelope or more than 1000 items with one 422 and creates nothing', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const item = (i: number) => ({ product_id: p.id, url: `https://big.example/${i}` });
    for (const [payload, field] of [
      [{ listings: Array.from({ length: 1001 }, (_, i) => item(i)) }, 'listings'],
      [{ listings: [] }, 'listings'],
      [{}, 'listings'],
      [{ listings: [item(1)], atomic: 'yes' }, 'atomic'],
      [{ listings: [item(1)], extra: true }, 'extra'],
    ] as const) {
      const err = expectError(await batch(headers, payload), 422, 'validation_failed');
      assert.deepEqual(fieldsOf(err), [field]);
    }
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings/batch',
      headers,
      payload: '{"listings": [',
    });
    expectError(bad, 400, 'invalid_json');
    assert.equal((await counts(t, accountId)).listings, 0);
  });

  it('creates 1000 listings in one request, one competitor per domain', async () => {
    const { headers, accountId } = await t.newKey();
    const products = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products/batch',
      headers,
      payload: {
        products: Array.from({ length: 250 }, (_, i) => ({
          name: `P ${i}`,
          sku: `S-${i}`,
          base_price: 10,
          currency: 'EUR',
        })),
      },
    });
    assert.equal(products.statusCode, 200);
    const listings = Array.from({ length: 1000 }, (_, i) => ({
      product_sku: `S-${i % 250}`,
      url: `https://shop${Math.floor(i / 250)}.example/p/${i}`,
    }));
    const started = performance.now();
    const res = await batch(headers, { listings });
    const ms = performance.now() - started;
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    const out = res.json<ListingBatchResult>();
    assert.equal(out.created, 1000);
    assert.equal(new Set(out.data.map((r) => r.listing!.competitor_id)).size, 4);
    assert.deepEqual(await counts(t, accountId), {
      listings: 1000,
      competitors: 4,
      listingEvents: 1000,
      competitorEvents: 4,
    });
    const page = await getJson<Page<Competitor>>(t, headers, '/api/v1/competitors?sort=name');
    assert.deepEqual(
      page.data.map((c) => [c.name, c.listing_count]),
      [0, 1, 2, 3].map((i) => [`shop${i}.example`, 250]),
    );
    if (process.env.BATCH_TIMING) console.log(`1000 listings in ${ms.toFixed(0)} ms`);
  });

  it('replays a retried request with the same Idempotency-Key instead of creating again', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const payload = { listings: [{ product_id: p.id, url: 'https://retry.example/a' }] };
    const first = await batch(headers, payload, { 'idempotency-key': 'listings-batch-1' });
    assert.equal(first.statusCode, 200);
    const again = await batch(headers, payload, { 'idempotency-key': 'listings-batch-1' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assert.deepEqual(await counts(t, accountId), {
      listings: 1,
      competitors: 1,
      listingEvents: 1,
      competitorEvents: 1,
    });
    const other = await batch(
      headers,
      { listings: [{ product_id: p.id, url: 'https://retry.example/b' }] },
      { 'idempotency-key': 'listings-batch-1' },
    );
    expectError(other, 409, 'conflict');
  });

  it('two batches at once deriving the same new domain make one competitor, without an error', async () => {
    const { headers, accountId } = await t.newKey();
    const products = await Promise.all(
      Array.from({ length: 4 }, (_, i) => createProduct(t, headers, { sku: `RACE-${i}` })),
    );
    for (let round = 0; round < 3; round++) {
      const domain = `race${round}.example`;
      const answers = await Promise.all(
        products.map((p, i) =>
          batch(headers, {
            listings: [
              { product_id: p.id, url: `https://${domain}/p/${i}` },
              { product_id: p.id, url: `https://www.${domain}/q/${i}` },
              // The same page of product 0 in every batch: one wins, the others are told it is listed.
              { product_id: products[0]!.id, url: `https://${domain}/shared` },
            ],
          }),
        ),
      );
      for (const res of answers) assert.equal(res.statusCode, 200, res.body);
      const outs = answers.map((r) => r.json<ListingBatchResult>());
      const shared = outs.map((o) => o.data[2]!.status).sort();
      assert.deepEqual(shared, [201, 409, 409, 409]);
      assert.equal(
        outs.reduce((n, o) => n + o.created, 0),
        9,
      );
      const competitors = await t.rt.db.query<{ id: string }>(
        'select id from competitors where account_id = $1 and domain = $2',
        [accountId, domain],
      );
      assert.equal(competitors.rows.length, 1, `one competitor for ${domain}`);
      const ids = new Set(
        outs.flatMap((o) => o.data.filter((r) => r.status === 201).map((r) => r.listing!.competitor_id)),
      );
      assert.deepEqual([...ids], [competitors.rows[0]!.id]);
    }
    const c = await counts(t, accountId);
    assert.equal(c.competitors, 3);
    assert.equal(c.competitorEvents, 3);
    assert.equal(c.listings, 27);
  });

  it('answers under /v1 too and needs a write key', async () => {
    const { headers } = await t.newKey();
    const p = await createProduct(t, headers);
    const res = await batch(headers, { listings: [{ product_id: p.id, url: 'https://v1.example/a' }] }, {}, '/v1');
    assert.equal(res.statusCode, 200, res.body);
    const anon = await t.app.inject({ method: 'POST', url: '/api/v1/listings/batch', payload: { listings: [] } });
    expectError(anon, 401, 'unauthorized');
  });
});
