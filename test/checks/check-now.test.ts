import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import { claimDueListings } from '../../src/checks/listing-leases.js';
import { BUSY_RETRY_AFTER_SECONDS } from '../../src/checks/check-now.js';
import { countRows, createCompetitor, insertListing, listingState, useMonitoringTest } from '../jobs/support.js';

/** POST /api/v1/listings/{id}/check: a check run now, through the real HTTP pipeline. */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

async function createListing(body: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings',
    headers: t.account.headers,
    payload: { product_id: t.account.productId, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

const checkNow = (id: string, headers = t.account.headers, prefix = '/api/v1') =>
  t.app.inject({ method: 'POST', url: `${prefix}/listings/${id}/check`, headers });

describe('POST /listings/{id}/check', () => {
  it('checks now and returns the recorded check, the same item GET /checks lists', T, async () => {
    const competitorId = await createCompetitor(t, 'Check-now shop');
    const id = await createListing({
      competitor_id: competitorId,
      url: t.site.pageUrl('jsonld-related-products.html'),
      check_interval_seconds: 7200,
    });
    const res = await checkNow(id);
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.headers['x-ratelimit-limit'], 'rate-limited like every API route');
    const check = res.json<CheckResult>();
    assert.equal(check.object, 'listing_check');
    assert.equal(check.listing_id, id);
    assert.equal(check.ok, true, check.error ?? '');
    assert.equal(check.http_status, 200);
    assert.equal(check.final_url, t.site.pageUrl('jsonld-related-products.html'));
    assert.equal(check.error_code, null);
    assert.equal(check.error, null);
    assert.equal(typeof check.price, 'number');
    assert.match(check.currency ?? '', /^[A-Z]{3}$/);
    const chosen = check.candidates.filter((c) => c.chosen);
    assert.equal(chosen.length, 1);
    assert.equal(chosen[0]!.price, check.price);
    assert.equal(chosen[0]!.source, check.source);
    assert.ok(
      check.candidates.some((c) => c.ignored !== null),
      "the related products' prices are listed as ignored",
    );

    // The same check as GET /listings/{id}/checks lists it.
    const list = await t.app.inject({
      method: 'GET',
      url: `/api/v1/listings/${id}/checks`,
      headers: t.account.headers,
    });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(list.json<{ data: CheckResult[] }>().data[0], check);

    // An observation, and the listing's state with the next check one interval away.
    const obs = await t.rt.db.query<{ price: string; competitor_id: string; source: string }>(
      `select price::text as price, competitor_id, source from price_observations where listing_id = $1`,
      [id],
    );
    assert.deepEqual(obs.rows, [{ price: check.price!.toFixed(4), competitor_id: competitorId, source: 'scrape' }]);
    const s = await listingState(t.rt.db, id);
    assert.equal(s.status, 'ok');
    assert.equal(s.locked_by, null);
    assert.ok(s.due_in >= 7200 - 2 && s.due_in <= 7200 * 1.1 + 1);
  });

  it('a failed check is a 200 with ok false and the reason; the listing counts the failure', T, async () => {
    const id = await createListing({ competitor_id: null, url: `${t.site.url}/status/404` });
    const res = await checkNow(id);
    assert.equal(res.statusCode, 200, res.body);
    const check = res.json<CheckResult>();
    assert.equal(check.ok, false);
    assert.equal(check.error_code, 'http_error');
    assert.equal(check.http_status, 404);
    assert.match(check.error ?? '', /404/);
    assert.equal(check.price, null);
    const s = await listingState(t.rt.db, id);
    assert.deepEqual([s.status, s.consecutive_failures], ['failing', 1]);
    assert.equal(await countRows(t.rt.db, 'price_observations', id), 0);
  });

  it('answers under /v1 too', T, async () => {
    const id = await createListing({ url: `${t.site.pageUrl('jsonld-basic.html')}?v1` });
    const res = await checkNow(id, t.account.headers, '/v1');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<CheckResult>().price, 19.99);
  });

  it('409 while a worker holds the listing; nothing fetched or recorded', T, async () => {
    const path = '/pages/jsonld-basic.html?held';
    const id = await insertListing(t, { url: t.site.url + path });
    const claimed = await claimDueListings(t.rt.db, 'busy-worker', 100, 60);
    assert.ok(claimed.some((l) => l.id === id));
    const keyed = { ...t.account.headers, 'idempotency-key': 'check-while-busy' };
    const res = await checkNow(id, keyed);
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json<{ code: string }>().code, 'conflict');
    // A conflict that ends by itself says when to ask again (the typed client retries it): the
    // worker's lease is 60 s, the hint is a check's usual length.
    assert.equal(res.headers['retry-after'], String(BUSY_RETRY_AFTER_SECONDS));
    assert.equal(t.site.hits(path), 0);
    assert.equal(await countRows(t.rt.db, 'listing_checks', id), 0);
    assert.equal((await listingState(t.rt.db, id)).locked_by, 'busy-worker');
    // Once the lease has expired, "check now" may take it; the retry it was told to make, with
    // the same Idempotency-Key, checks (the 409 was not stored as the key's answer).
    await t.rt.db.query(
      `update listings set locked_until = now() - interval '1 second' where locked_by = 'busy-worker'`,
    );
    const after = await checkNow(id, keyed);
    assert.equal(after.statusCode, 200, after.body);
    assert.equal(after.headers['idempotent-replayed'], undefined);
  });

  it('two requests at once: one checks, the other gets 409', T, async () => {
    const id = await createListing({ url: `${t.site.url}/hold/check-now-race` });
    const arrived = t.site.waitForRequests(1, (r) => r.path === '/hold/check-now-race');
    const first = checkNow(id);
    await arrived;
    const second = await checkNow(id);
    assert.equal(second.statusCode, 409, second.body);
    assert.match(String(second.headers['retry-after']), /^[12]$/);
    t.site.release('check-now-race');
    assert.equal((await first).statusCode, 200);
    assert.equal(t.site.hits('/hold/check-now-race'), 1);
  });

  it("404 for an unknown listing and for another account's", T, async () => {
    const id = await createListing({ url: `${t.site.pageUrl('jsonld-basic.html')}?mine` });
    const other = await t.newKey('free');
    for (const [lid, headers] of [
      ['lst_00000000000000000000000000', t.account.headers],
      [id, other.headers],
    ] as const) {
      const res = await checkNow(lid, headers);
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json<{ code: string }>().code, 'not_found');
    }
    assert.equal(await countRows(t.rt.db, 'listing_checks', id), 0);
  });

  it('401 without a key', T, async () => {
    const id = await createListing({ url: `${t.site.pageUrl('jsonld-basic.html')}?nokey` });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/listings/${id}/check` });
    assert.equal(res.statusCode, 401);
  });

  it('records the visible price with its evidence, and visible_fallback: false turns the finder off', T, async () => {
    const competitorId = await createCompetitor(t, 'Visible shop');
    const url = t.site.pageUrl('v-uvp-struck-jsonld.html');
    const id = await createListing({ competitor_id: competitorId, url });
    const res = await checkNow(id);
    assert.equal(res.statusCode, 200, res.body);
    const check = res.json<CheckResult>();
    assert.equal(check.ok, true, check.error ?? '');
    assert.equal(check.source, 'visible');
    assert.equal(check.price, 119.01);
    const chosen = check.candidates.find((c) => c.chosen)!;
    assert.match(chosen.evidence?.path ?? '', /span\.price/);
    assert.equal(chosen.evidence?.text, '119,01 €');
    assert.match(chosen.reason ?? '', /^score \d+: /);
    assert.ok((chosen.confidence ?? 0) > 0.5);
    // The structured price it overruled is kept with the reason: the check's record of the disagreement.
    assert.match(
      check.candidates.find((c) => c.source === 'json-ld')?.ignored ?? '',
      /old price the page shows struck through/,
    );

    const off = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/listings/${id}`,
      headers: t.account.headers,
      payload: { visible_fallback: false },
    });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json<{ visible_fallback: boolean }>().visible_fallback, false);
    const again = (await checkNow(id)).json<CheckResult>();
    assert.equal(again.source, 'json-ld');
    assert.equal(again.price, 149.99);
    assert.equal(
      again.candidates.some((c) => c.source === 'visible'),
      false,
    );
  });
});
