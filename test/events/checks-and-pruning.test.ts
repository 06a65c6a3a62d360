import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pruneEvents } from '../../src/events/service.js';
import { createCompetitor, useMonitoringTest } from '../jobs/support.js';
import type { AnyEvent } from '../helpers/api-types.js';

/** Checks tell their outcome through the outbox; old events are pruned (docs/EVENTS.md). */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

async function eventsOf(type: string): Promise<AnyEvent[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/events?type=${type}&sort=created_at&limit=100`,
    headers: t.account.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: AnyEvent[] }>().data;
}

async function listing(body: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings',
    headers: t.account.headers,
    payload: { product_id: t.account.productId, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ id: string }>().id;
}

const checkNow = (id: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/listings/${id}/check`, headers: t.account.headers });

describe('events from checks', () => {
  it(
    'a failed check records listing.check_failed with the check; a successful one a price.changed once the price moves',
    T,
    async () => {
      const competitorId = await createCompetitor(t, 'Events shop');
      const failing = await listing({ competitor_id: competitorId, url: `${t.site.url}/status/500` });
      const failed = await checkNow(failing);
      assert.equal(failed.statusCode, 200, failed.body);
      const [event, ...more] = await eventsOf('listing.check_failed');
      assert.equal(more.length, 0);
      assert.deepEqual(event!.data, failed.json(), 'the data is the check as the API returned it');
      assert.equal(event!.data.listing_id, failing);

      // Two successful checks of pages with different prices, on one listing: one change.
      const ok = await listing({ competitor_id: competitorId, url: t.site.pageUrl('jsonld-basic.html') });
      assert.equal((await checkNow(ok)).json<{ ok: boolean }>().ok, true);
      assert.deepEqual(await eventsOf('price.changed'), [], 'the first price of a series is not a change');
      await t.rt.db.query(`update listings set url = $2 where id = $1`, [
        ok,
        t.site.pageUrl('jsonld-sale-list-price.html'),
      ]);
      const second = await checkNow(ok);
      assert.equal(second.json<{ ok: boolean }>().ok, true, second.body);
      const changed = await eventsOf('price.changed');
      assert.equal(changed.length, 1);
      assert.equal(changed[0]!.data.competitor_id, competitorId);
      assert.equal(changed[0]!.data.source, 'scrape');
      assert.equal(changed[0]!.data.sequence, 1);
      assert.equal((changed[0]!.data.new as { price: number }).price, second.json<{ price: number }>().price);
    },
  );
});

describe('event retention', () => {
  it('prunes events older than the retention, with their deliveries, and keeps the rest', T, async () => {
    const product = await t.app.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: t.account.headers,
      payload: { name: 'Old news', base_price: 1, currency: 'EUR' },
    });
    assert.equal(product.statusCode, 201);
    const [recent] = await eventsOf('product.created');
    assert.ok(recent);
    // Two events as if written 31 and 29 days ago.
    await t.rt.db.query(
      `insert into events (id, account_id, type, data, created_at)
       values ('evt_old', $1, 'product.updated', '{}', now() - interval '31 days'),
              ('evt_young', $1, 'product.updated', '{}', now() - interval '29 days')`,
      [t.account.accountId],
    );
    const endpoint = 'wh_prunetest';
    await t.rt.db.query(
      `insert into webhook_endpoints (id, account_id, url, secret) values ($1, $2, 'https://example.com/h', 'whsec_x')`,
      [endpoint, t.account.accountId],
    );
    await t.rt.db.query(
      `insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt)
       select 'whdl_' || e.id, e.account_id, $1, e.id, e.seq, e.created_at, 1 from events e where e.id in ('evt_old', 'evt_young')`,
      [endpoint],
    );
    // No day partition that old in a fresh database: the default partition's row, deleted row-wise.
    const pruned = await pruneEvents(t.rt.db, 30);
    assert.equal(pruned.deleted + pruned.dropped.length, 1, JSON.stringify(pruned));
    const left = await t.rt.db.query<{ id: string }>(
      `select id from events where account_id = $1 and id in ('evt_old', 'evt_young', $2) order by id`,
      [t.account.accountId, recent.id],
    );
    assert.deepEqual(left.rows.map((r) => r.id).sort(), ['evt_young', recent.id].sort());
    const deliveries = await t.rt.db.query<{ event_id: string }>(
      `select event_id from webhook_deliveries where endpoint_id = $1`,
      [endpoint],
    );
    assert.deepEqual(
      deliveries.rows.map((r) => r.event_id),
      ['evt_young'],
    );
    const again = await pruneEvents(t.rt.db, 30);
    assert.deepEqual([again.dropped, again.deleted], [[], 0], 'a second run finds nothing');
  });
});
