import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { claimDueListings } from '../../src/checks/listing-leases.js';
import { recordCheck } from '../../src/checks/sql.js';
import type { CheckFinished } from '../../src/checks/worker.js';
import { countRows, insertListing, listingState, nextCheck, startWorker, useMonitoringTest } from './support.js';

/** Leases: claims that exclude each other, expire when their worker dies, renew while it lives. */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

describe('leases', () => {
  it('a claim takes each due listing once; a second claim gets none of them', T, async () => {
    const ids = await Promise.all(
      [0, 1, 2].map((i) => insertListing(t, { url: `${t.site.pageUrl('jsonld-basic.html')}?claim=${i}`, dueIn: -1 })),
    );
    const first = await claimDueListings(t.rt.db, 'worker-a', 10, 60);
    const second = await claimDueListings(t.rt.db, 'worker-b', 10, 60);
    assert.deepEqual(
      first
        .map((l) => l.id)
        .filter((id) => ids.includes(id))
        .sort(),
      [...ids].sort(),
    );
    assert.deepEqual(
      second.filter((l) => ids.includes(l.id)),
      [],
    );
    for (const id of ids) {
      const s = await listingState(t.rt.db, id);
      assert.equal(s.locked_by, 'worker-a');
      // Held listings are not due: their next_check_at is the lease's end.
      assert.ok(s.locked_until && s.next_check_at.getTime() === s.locked_until.getTime());
      assert.ok(s.due_in > 55 && s.due_in <= 60);
    }
    await t.rt.db.query(
      `update listings set locked_by = null, locked_until = null, enabled = false where id = any($1)`,
      [ids],
    );
  });

  it(
    "a crashed worker's listing is taken over once its lease expires, and its late result is discarded",
    T,
    async () => {
      const url = `${t.site.pageUrl('jsonld-basic.html')}?lease=expiry`;
      const id = await insertListing(t, { url });
      // "crashed" claims the listing with a one-second lease and is never heard of again.
      const [claimed] = await claimDueListings(t.rt.db, 'crashed', 1, 1);
      assert.equal(claimed?.id, id);
      const lockedUntil = (await listingState(t.rt.db, id)).locked_until!;

      const worker = startWorker(t);
      await worker.start();
      const { row, outcome } = await nextCheck(worker, id);
      await worker.stop(0);
      assert.ok(outcome.startedAt.getTime() >= lockedUntil.getTime(), 'taken over only after the lease expired');
      assert.equal(row?.ok, true);
      assert.equal(t.site.hits(url.slice(t.site.url.length)), 1);

      // The crashed worker comes back to life and tries to record what it found: nothing is written.
      const late = await recordCheck(t.rt.db, {
        listingId: id,
        target: claimed,
        lockedBy: 'crashed',
        startedAt: new Date(),
        checkedAt: new Date(),
        durationMs: 1,
        ok: true,
        httpStatus: 200,
        finalUrl: url,
        price: '1.00',
        currency: 'USD',
        inStock: true,
        source: 'json-ld',
        errorCode: null,
        error: null,
        candidates: [],
      });
      assert.equal(late, null);
      assert.equal(await countRows(t.rt.db, 'listing_checks', id), 1);
      assert.equal(await countRows(t.rt.db, 'price_observations', id), 1);
      assert.equal((await listingState(t.rt.db, id)).last_price, '19.9900');
    },
  );

  it('a running check keeps its lease renewed, so another worker never takes it', T, async () => {
    const a = startWorker(t, { leaseSeconds: 0.3, workerId: 'renewing' }); // renews every 100 ms
    const b = startWorker(t, { workerId: 'poacher' });
    const id = await insertListing(t, { url: `${t.site.url}/hold/renew` });
    const byB: CheckFinished[] = [];
    b.on('checked', (e) => byB.push(e));
    const arrived = t.site.waitForRequests(1, (r) => r.path === '/hold/renew');
    await a.start();
    await arrived;
    await b.start();
    // Well past the original lease (300 ms): four renewals of 300 ms each, every 100 ms.
    for (let i = 0; i < 4; i++) {
      const [held] = (await once(a, 'renewed')) as [string[]];
      assert.deepEqual(held, [id]);
      assert.equal((await listingState(t.rt.db, id)).locked_by, 'renewing');
    }
    const checked = nextCheck(a, id);
    t.site.release('renew');
    const { row } = await checked;
    await Promise.all([a.stop(0), b.stop(0)]);
    assert.equal(row?.ok, true);
    assert.deepEqual(
      byB.filter((e) => e.listingId === id),
      [],
    );
    assert.equal(t.site.hits('/hold/renew'), 1);
    assert.equal(await countRows(t.rt.db, 'listing_checks', id), 1);
  });

  it('stop() lets running checks finish within the grace period', T, async () => {
    const worker = startWorker(t, { workerId: 'graceful' });
    const id = await insertListing(t, { url: `${t.site.url}/hold/grace` });
    const arrived = t.site.waitForRequests(1, (r) => r.path === '/hold/grace');
    await worker.start();
    await arrived;
    const stopped = worker.stop(10_000);
    t.site.release('grace');
    await stopped;
    assert.equal(await countRows(t.rt.db, 'listing_checks', id), 1);
    assert.equal((await listingState(t.rt.db, id)).status, 'ok');
  });

  it(
    'stop() abandons checks still running after the grace period and gives their listings back, due at once',
    T,
    async () => {
      const worker = startWorker(t, { workerId: 'impatient' });
      const id = await insertListing(t, { url: `${t.site.url}/hold/abandon` });
      const arrived = t.site.waitForRequests(1, (r) => r.path === '/hold/abandon');
      await worker.start();
      await arrived;
      assert.equal((await listingState(t.rt.db, id)).locked_by, 'impatient');
      await worker.stop(50);
      t.site.release('abandon');
      const s = await listingState(t.rt.db, id);
      assert.equal(s.locked_by, null);
      assert.equal(s.locked_until, null);
      assert.ok(s.due_in <= 0, 'due again at once');
      assert.equal(s.status, 'pending');
      assert.equal(await countRows(t.rt.db, 'listing_checks', id), 0);
    },
  );
});
