import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import { countRows, listingState, useMonitoringTest } from '../jobs/support.js';

/**
 * Issue 23 through a real check: fixture pages served by the fixture site on 127.0.0.1,
 * fetched, extracted and recorded by "check now" (POST /listings/{id}/check), as every check of
 * a listing is. What a check records is what a merchant is asked to act on.
 */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

async function check(file: string): Promise<{ id: string; check: CheckResult }> {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings',
    headers: t.account.headers,
    payload: { product_id: t.account.productId, url: t.site.pageUrl(file) },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json<{ id: string }>().id;
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/listings/${id}/check`, headers: t.account.headers });
  assert.equal(res.statusCode, 200, res.body);
  return { id, check: res.json<CheckResult>() };
}

async function observed(id: string): Promise<string[]> {
  const r = await t.rt.db.query<{ price: string; currency: string }>(
    `select price::text as price, currency from price_observations where listing_id = $1`,
    [id],
  );
  return r.rows.map((o) => `${o.price} ${o.currency}`);
}

describe('a check records what the shopper pays', () => {
  it('a price split over elements: 229.99, never 22999', T, async () => {
    const { id, check: c } = await check('pay-split-cents.html');
    assert.equal(c.ok, true, c.error ?? '');
    assert.deepEqual([c.price, c.currency, c.source, c.in_stock], [229.99, 'USD', 'visible', true]);
    assert.deepEqual(await observed(id), ['229.9900 USD']);
  });

  it('the consumer price with VAT where the page shows both', T, async () => {
    const { id, check: c } = await check('pay-vat-both-sk.html');
    assert.deepEqual([c.price, c.currency], [5263.2, 'EUR']);
    assert.ok(
      c.candidates.some((x) => x.price === 4386 && x.ignored === 'the price without VAT'),
      JSON.stringify(c.candidates),
    );
    assert.deepEqual(await observed(id), ['5263.2000 EUR']);
  });

  it("an auction's current bid, never its starting price or estimate", T, async () => {
    const { id, check: c } = await check('pay-auction-current-bid.html');
    assert.deepEqual([c.price, c.source], [200, 'meta']);
    assert.deepEqual(await observed(id), ['200.0000 USD']);
  });

  it('nothing for an auction that shows only its estimate: the check fails and says what to pin', T, async () => {
    const { id, check: c } = await check('pay-auction-estimate-only-de.html');
    assert.deepEqual([c.ok, c.error_code, c.price], [false, 'no_price', null]);
    assert.match(c.error ?? '', /set a CSS selector for the price$/);
    assert.equal(await countRows(t.rt.db, 'price_observations', id), 0);
  });
});

describe('a check records the stock state the page shows', () => {
  it('"notify me" in place of the buy button: out of stock', T, async () => {
    const { id, check: c } = await check('stock-notify-me-it.html');
    assert.deepEqual([c.price, c.in_stock], [89.9, false]);
    assert.equal((await listingState(t.rt.db, id)).in_stock, false);
  });

  it(
    'structured data says in stock, the page says sold out: the page, in the check and on the listing',
    T,
    async () => {
      const { id, check: c } = await check('v-jsonld-instock-sold-out.html');
      assert.equal(c.in_stock, false);
      assert.equal((await listingState(t.rt.db, id)).in_stock, false);
    },
  );

  it('a page that says nothing: unknown stays null', T, async () => {
    const { check: c } = await check('stock-unknown-es.html');
    assert.equal(c.ok, true, c.error ?? '');
    assert.equal(c.in_stock, null);
  });
});
