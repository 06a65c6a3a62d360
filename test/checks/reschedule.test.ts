import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { CheckResult } from '../../src/checks/schemas.js';
import { runCheck } from '../../src/checks/run-check.js';
import { claimDueListings, renewLeases } from '../../src/checks/listing-leases.js';
import type { Listing } from '../../src/listings/schemas.js';
import { countRows, listingState, useMonitoringTest } from '../jobs/support.js';

/**
 * A check that finishes while the user changes its listing: the user's change wins over the
 * schedule the finished check would set (src/checks/sql.ts, recordCheck). Each check is held in
 * flight by the fixture site's /hold/<key> page until the test has made its change, then
 * released: no timing involved.
 */

const t = useMonitoringTest();
const T = { timeout: 30_000 };
const WORKER = 'reschedule-worker';
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

async function createListing(key: string, body: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  const url = `${t.site.url}/hold/${key}`;
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings',
    headers: t.account.headers,
    payload: { product_id: t.account.productId, url, check_interval_seconds: 86_400, ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { id: res.json<Listing>().id, url };
}

const patch = async (id: string, payload: Record<string, unknown>) => {
  const res = await t.app.inject({
    method: 'PATCH',
    url: `/api/v1/listings/${id}`,
    headers: t.account.headers,
    payload,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Listing>();
};

const getListing = async (id: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/listings/${id}`, headers: t.account.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Listing>();
};

/** Claims `id` as a worker does (the only due listing of this file's account at that moment). */
async function claim(id: string) {
  const claimed = await claimDueListings(t.rt.db, WORKER, 10, 60);
  assert.deepEqual(
    claimed.map((c) => c.id),
    [id],
  );
  return claimed[0]!;
}

/**
 * Starts the worker's check of a claimed listing; resolves, once its page request is held at the
 * site, with the running check (wrapped: an async function would wait for a promise it returns).
 */
async function checkHeld(target: Awaited<ReturnType<typeof claim>>, key: string) {
  const arrived = t.site.waitForRequests(1, (r) => r.path === `/hold/${key}`);
  const done = runCheck({ db: t.rt.db, fetcher: t.rt.fetcher, extractor: t.rt.extractor }, target, WORKER, log);
  await arrived;
  return { done };
}

/** POST /listings/{id}/check, resolved once its page request is held at the site, with the request (`done`). */
async function checkNowHeld(id: string, key: string) {
  const arrived = t.site.waitForRequests(1, (r) => r.path === `/hold/${key}`);
  const done = t.app.inject({ method: 'POST', url: `/api/v1/listings/${id}/check`, headers: t.account.headers });
  await arrived;
  return { done };
}

/** The listing's next check is one interval of `seconds` away, plus at most 10 % jitter (src/checks/sql.ts). */
async function assertDueInOneInterval(id: string, seconds: number) {
  const s = await listingState(t.rt.db, id);
  assert.ok(s.due_in >= seconds - 2 && s.due_in <= seconds * 1.1 + 1, `due in ${s.due_in} s`);
}

describe('a check finishing while the user changes the listing', () => {
  it("a new interval during a worker's check: the listing stays due now, the check is still recorded", T, async () => {
    const { id } = await createListing('interval');
    const target = await claim(id);
    const running = await checkHeld(target, 'interval');

    const patched = await patch(id, { check_interval_seconds: 600 });
    assert.ok(
      patched.next_check_at !== null && Date.parse(patched.next_check_at) <= Date.now(),
      'the change makes it due now',
    );
    // The worker's lease renewal while the check runs leaves the user's time alone.
    assert.deepEqual(await renewLeases(t.rt.db, WORKER, [id], 60), [id]);
    assert.equal((await getListing(id)).next_check_at, patched.next_check_at);

    t.site.release('interval');
    const { row } = await running.done;
    assert.equal(row?.ok, true, row?.error ?? '');
    const after = await getListing(id);
    assert.equal(after.status, 'ok');
    assert.equal(after.last_price, 5);
    assert.equal(
      after.next_check_at,
      patched.next_check_at,
      "the user's reschedule is not overwritten by the finished check",
    );
    assert.equal(after.check_interval_seconds, 600);
    assert.equal((await listingState(t.rt.db, id)).locked_by, null);

    // Due now: the next claim takes it again, with the new settings.
    const next = await checkHeld(await claim(id), 'interval');
    t.site.release('interval');
    assert.equal((await next.done).row?.ok, true);
    // Nothing changed during this one: the next check is one (new) interval away, with jitter.
    await assertDueInOneInterval(id, 600);
    await patch(id, { enabled: false });
  });

  it("disabled during a worker's check: recorded, but not rescheduled and not claimed again", T, async () => {
    const { id } = await createListing('disable');
    const target = await claim(id);
    const running = await checkHeld(target, 'disable');
    const stored = (await listingState(t.rt.db, id)).next_check_at;

    const patched = await patch(id, { enabled: false });
    assert.equal(patched.next_check_at, null);
    t.site.release('disable');
    const { row } = await running.done;
    assert.equal(row?.ok, true, row?.error ?? '');

    const after = await getListing(id);
    assert.deepEqual([after.enabled, after.status, after.last_price, after.next_check_at], [false, 'ok', 5, null]);
    const s = await listingState(t.rt.db, id);
    assert.equal(s.next_check_at.getTime(), stored.getTime(), 'the stored time is left as it was');
    assert.equal(s.locked_by, null);
    assert.deepEqual(await claimDueListings(t.rt.db, WORKER, 10, 60), []);

    // Enabling it again makes it due now, as always.
    const enabled = await patch(id, { enabled: true });
    assert.ok(enabled.next_check_at !== null && Date.parse(enabled.next_check_at) <= Date.now());
    await patch(id, { enabled: false });
  });

  it("a change that reschedules nothing during the check leaves the check's schedule in place", T, async () => {
    const { id } = await createListing('same', { check_interval_seconds: 3600 });
    const target = await claim(id);
    const running = await checkHeld(target, 'same');
    await patch(id, { check_interval_seconds: 3600, enabled: true });
    t.site.release('same');
    assert.equal((await running.done).row?.ok, true);
    await assertDueInOneInterval(id, 3600);
    await patch(id, { enabled: false });
  });

  it("POST /listings/{id}/check: a new interval sent during the check wins over the check's schedule", T, async () => {
    const { id } = await createListing('manual');
    // Not due: only the manual check runs it.
    await t.rt.db.query(`update listings set next_check_at = now() + interval '1 day' where id = $1`, [id]);
    const checking = await checkNowHeld(id, 'manual');

    // A worker cannot take it meanwhile (not due, and locked), whatever the user does.
    const patched = await patch(id, { check_interval_seconds: 900 });
    assert.deepEqual(await claimDueListings(t.rt.db, WORKER, 10, 60), []);

    t.site.release('manual');
    const res = await checking.done;
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<CheckResult>().ok, true);
    const after = await getListing(id);
    assert.equal(after.next_check_at, patched.next_check_at);
    assert.equal(after.last_price, 5);
    assert.equal(await countRows(t.rt.db, 'listing_checks', id), 1);
    await patch(id, { enabled: false });
  });

  it('POST /listings/{id}/check without a change: the next check is one interval from now', T, async () => {
    const { id } = await createListing('manual-plain', { check_interval_seconds: 7200 });
    const checking = await checkNowHeld(id, 'manual-plain');
    const held = await listingState(t.rt.db, id);
    assert.equal(held.next_check_at.getTime(), held.locked_until?.getTime(), 'while checked it is not due (lease end)');
    t.site.release('manual-plain');
    assert.equal((await checking.done).statusCode, 200);
    await assertDueInOneInterval(id, 7200);
    await patch(id, { enabled: false });
  });

  it('POST /listings/{id}/check on a disabled listing records it and leaves it unscheduled', T, async () => {
    const { id } = await createListing('manual-disabled', { enabled: false });
    const stored = (await listingState(t.rt.db, id)).next_check_at;
    const checking = await checkNowHeld(id, 'manual-disabled');
    t.site.release('manual-disabled');
    assert.equal((await checking.done).statusCode, 200);
    const after = await getListing(id);
    assert.deepEqual([after.status, after.last_price, after.next_check_at], ['ok', 5, null]);
    assert.equal((await listingState(t.rt.db, id)).next_check_at.getTime(), stored.getTime());
  });
});
