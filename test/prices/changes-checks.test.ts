import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import { createCompetitor, useMonitoringTest } from '../jobs/support.js';
import { changesOf, ingestOk } from './ingest-support.js';

/** Price changes recorded by the check path (a real check of a fixture page), beside POST /prices. */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

describe('price changes from checks', () => {
  it(
    'a check that finds a new price records a change with source scrape; the same price again does not',
    T,
    async () => {
      const { headers, productId } = t.account;
      const competitorId = await createCompetitor(t, 'Changes shop');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers,
        payload: { product_id: productId, competitor_id: competitorId, url: t.site.pageUrl('jsonld-basic.html') },
      });
      assert.equal(res.statusCode, 201, res.body);
      const listingId = res.json<{ id: string }>().id;
      // What the account's own system saw an hour ago, for this listing.
      const sent = await ingestOk(t, headers, [
        {
          product_id: productId,
          listing_id: listingId,
          price: 1.5,
          currency: 'EUR',
          in_stock: true,
          observed_at: new Date(Date.now() - 3_600_000).toISOString(),
        },
      ]);
      assert.equal(sent.created, 1);

      const check = async () => {
        const r = await t.app.inject({ method: 'POST', url: `/api/v1/listings/${listingId}/check`, headers });
        assert.equal(r.statusCode, 200, r.body);
        const c = r.json<CheckResult>();
        assert.equal(c.ok, true, c.error ?? '');
        return c;
      };
      const first = await check();
      const changes = await changesOf(t, headers, `&competitor_id=${competitorId}`);
      assert.equal(changes.length, 1);
      const [ch] = changes;
      assert.equal(ch!.source, 'scrape');
      assert.deepEqual([ch!.product_id, ch!.competitor_id, ch!.listing_id], [productId, competitorId, listingId]);
      assert.deepEqual([ch!.old.price, ch!.old.currency, ch!.old.in_stock], [1.5, 'EUR', true]);
      assert.deepEqual([ch!.new.price, ch!.new.currency], [first.price, first.currency]);
      if (first.currency === 'EUR')
        assert.equal(ch!.change!.amount, Math.round((first.price! - 1.5) * 10_000) / 10_000);
      else assert.equal(ch!.change, null);

      await check();
      assert.equal(
        (await changesOf(t, headers, `&competitor_id=${competitorId}`)).length,
        1,
        'the same price again is no change',
      );
    },
  );
});
