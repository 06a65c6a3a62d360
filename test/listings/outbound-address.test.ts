import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCompetitor, createListing, getJson } from '../competitors/support.js';
import { type TestApp, useTestApp } from '../helpers/app.js';
import { createProduct, expectError, type Headers } from '../products/support.js';
import type { Listing, ListingBatchResult } from '../helpers/api-types.js';

/**
 * API.md, "Outbound requests": a URL on a private, loopback, link-local or metadata address is
 * refused unless the operator allows it. POST /listings and a listing's new url (PUT, PATCH)
 * refuse it exactly as an item of POST /listings/batch does: 422 `validation_failed`, the same
 * detail on `url`, and nothing stored.
 */

const REFUSED = [
  ['http://10.0.0.1/kettle', /10\.0\.0\.1 is a private network address/],
  ['http://192.168.1.20:8080/kettle', /private network/],
  ['http://169.254.169.254/latest/meta-data/', /cloud metadata/],
  ['http://169.254.10.10/x', /link-local/],
  ['http://100.64.0.1/x', /carrier-grade NAT/],
  ['http://[fd00::1]/x', /unique-local/],
  ['http://[::ffff:10.0.0.1]/x', /private network/],
] as const;
const LOOPBACK = ['http://127.0.0.1:8080/kettle', 'http://[::1]/kettle', 'http://localhost:8080/kettle'] as const;

async function listingCount(t: TestApp, accountId: string, events = false): Promise<number> {
  const sql = events
    ? `select count(*)::int as n from events where account_id = $1 and type like 'listing.%'`
    : 'select count(*)::int as n from listings where account_id = $1';
  return Number((await t.rt.db.query<{ n: number | string }>(sql, [accountId])).rows[0]!.n);
}

/** What the batch says of one item with `url`: its per-item error. */
async function batchError(t: TestApp, headers: Headers, productId: string, competitorId: string, url: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings/batch',
    headers,
    payload: { listings: [{ product_id: productId, competitor_id: competitorId, url }] },
  });
  assert.equal(res.statusCode, 200, res.body);
  const item = res.json<ListingBatchResult>().data[0]!;
  assert.equal(item.status, 422, `${url}: ${JSON.stringify(item)}`);
  return item.error!;
}

describe('listings: URLs on private, loopback, link-local and metadata addresses (loopback not allowed)', () => {
  const t = useTestApp();

  it('POST /listings refuses them as POST /listings/batch does, and stores nothing', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const c = await createCompetitor(t, headers);
    for (const [url, message] of [...REFUSED, ...LOOPBACK.map((u) => [u, /loopback/] as const)]) {
      for (const prefix of ['/api/v1', '/v1']) {
        const res = await t.app.inject({
          method: 'POST',
          url: `${prefix}/listings`,
          headers,
          payload: { product_id: p.id, competitor_id: c.id, url },
        });
        const body = expectError(res, 422, 'validation_failed');
        assert.equal(body.details?.length, 1, res.body);
        assert.equal(body.details![0]!.field, 'url');
        assert.match(body.details![0]!.message, message, url);
        // The same code and detail as the batch's item.
        const item = await batchError(t, headers, p.id, c.id, url);
        assert.equal(item.code, body.code, url);
        assert.deepEqual(item.details, body.details, url);
      }
      // Our own page too (no competitor).
      const own = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers,
        payload: { product_id: p.id, url },
      });
      assert.equal(expectError(own, 422, 'validation_failed').details![0]!.field, 'url');
    }
    assert.equal(await listingCount(t, accountId), 0, 'nothing stored');
    assert.equal(await listingCount(t, accountId, true), 0, 'no event');
    // A public address still goes through.
    await createListing(t, headers, { product_id: p.id, competitor_id: c.id, url: 'https://rival.example/kettle' });
    assert.equal(await listingCount(t, accountId), 1);
  });

  it("our own listing without a url takes the product's, which is refused the same way", async () => {
    const { headers, accountId } = await t.newKey();
    // Products may name any page of ours (only checks fetch it): the listing is where it would be fetched.
    const p = await createProduct(t, headers, { url: 'http://10.1.2.3/our-kettle' });
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/listings', headers, payload: { product_id: p.id } });
    const body = expectError(res, 422, 'validation_failed');
    assert.equal(body.details![0]!.field, 'url');
    assert.match(body.details![0]!.message, /10\.1\.2\.3 is a private network address.*product's url/);
    assert.equal(await listingCount(t, accountId), 0);
    assert.equal(await listingCount(t, accountId, true), 0);
  });

  it('PUT and PATCH refuse such a url and leave the listing as it was', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const c = await createCompetitor(t, headers);
    const l = await createListing(t, headers, {
      product_id: p.id,
      competitor_id: c.id,
      url: 'https://rival.example/k',
    });
    const eventsBefore = await listingCount(t, accountId, true);
    for (const method of ['PUT', 'PATCH'] as const) {
      for (const [url, message] of [...REFUSED, ['http://[::1]:9/x', /loopback/] as const]) {
        const res = await t.app.inject({ method, url: `/api/v1/listings/${l.id}`, headers, payload: { url } });
        const body = expectError(res, 422, 'validation_failed');
        assert.deepEqual(
          body.details?.map((d) => d.field),
          ['url'],
        );
        assert.match(body.details![0]!.message, message, `${method} ${url}`);
      }
    }
    assert.equal((await getJson<Listing>(t, headers, `/api/v1/listings/${l.id}`)).url, 'https://rival.example/k');
    assert.equal(await listingCount(t, accountId, true), eventsBefore, 'no listing.updated');
    // Another account's listing is still a 404 before anything (its url is not looked at).
    const other = await t.newKey();
    const foreign = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers: other.headers,
      payload: { url: 'https://fine.example/' },
    });
    expectError(foreign, 404, 'not_found');
    const moved = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${l.id}`,
      headers,
      payload: { url: 'https://rival.example/kettle-2' },
    });
    assert.equal(moved.statusCode, 200, moved.body);
  });
});

describe('listings: loopback allowed by configuration (ALLOW_LOOPBACK_TARGETS), nothing else', () => {
  const t = useTestApp({ ALLOW_LOOPBACK_TARGETS: 'true' });

  it('accepts 127.0.0.1, ::1 and localhost; still refuses private and metadata addresses', async () => {
    const { headers, accountId } = await t.newKey();
    const p = await createProduct(t, headers);
    const c = await createCompetitor(t, headers);
    for (const url of LOOPBACK) await createListing(t, headers, { product_id: p.id, competitor_id: c.id, url });
    assert.equal(await listingCount(t, accountId), LOOPBACK.length);
    for (const [url, message] of REFUSED) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers,
        payload: { product_id: p.id, competitor_id: c.id, url },
      });
      assert.match(expectError(res, 422, 'validation_failed').details![0]!.message, message, url);
    }
    assert.equal(await listingCount(t, accountId), LOOPBACK.length);
  });
});
