import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import { createCompetitor, useMonitoringTest } from '../jobs/support.js';
import { createRule, fired } from './engine-support.js';

/** Rules over checks of a real page on the fixture site: a failed check is never a price; listing_failing counts failures in a row. */

const t = useMonitoringTest();
const T = { timeout: 60_000 };

describe('alert engine: checks', () => {
  it(
    'a failed check in the middle moves no price rule; listing_failing fires at N failures in a row and re-arms on a success',
    T,
    async () => {
      const { headers, productId } = t.account;
      const competitorId = await createCompetitor(t, 'Alert shop');
      const good = t.site.pageUrl('jsonld-basic.html'); // 19.99 USD
      const failing = good.replace(/\/pages\/.*$/, '/status/500');
      const l = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers,
        payload: { product_id: productId, competitor_id: competitorId, url: good },
      });
      assert.equal(l.statusCode, 201, l.body);
      const listingId = l.json<{ id: string }>().id;
      const below = await createRule(t, headers, {
        listing_id: listingId,
        condition: { type: 'price_below', threshold: 25, currency: 'USD' },
        confirmations: 2,
      });
      const failingRule = await createRule(t, headers, {
        listing_id: listingId,
        condition: { type: 'listing_failing', failures: 2 },
      });

      const check = async (url: string, ok: boolean) => {
        const p = await t.app.inject({
          method: 'PATCH',
          url: `/api/v1/listings/${listingId}`,
          headers,
          payload: { url },
        });
        assert.equal(p.statusCode, 200, p.body);
        const r = await t.app.inject({ method: 'POST', url: `/api/v1/listings/${listingId}/check`, headers });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(r.json<CheckResult>().ok, ok, r.body);
      };
      await check(good, true); // below: 1 in a row
      await check(failing, false); // not a price: the streak stays
      await check(good, true); // 2 in a row: fires; the success also ends the failures
      assert.deepEqual(
        (await fired(t, headers, below)).map((e) => [e.current!.price, e.current!.currency, e.listing_id]),
        [[19.99, 'USD', listingId]],
      );
      await check(failing, false);
      assert.deepEqual(await fired(t, headers, failingRule), []);
      await check(failing, false);
      const events = await fired(t, headers, failingRule);
      assert.equal(events.length, 1);
      assert.deepEqual(
        [events[0]!.condition_type, events[0]!.listing_id, events[0]!.competitor_id, events[0]!.current],
        ['listing_failing', listingId, competitorId, null],
      );
      assert.match(events[0]!.message, /failed 2 times in a row/);
      await check(failing, false); // still failing, not re-armed
      await check(good, true);
      await check(failing, false);
      await check(failing, false);
      assert.equal((await fired(t, headers, failingRule)).length, 2);
      assert.equal((await fired(t, headers, below)).length, 1, 'on_clear: 19.99 stays below, no second firing');
    },
  );
});
