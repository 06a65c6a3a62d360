import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BACKOFF_CAP_SECONDS, FLAG_AFTER_FAILURES, JITTER_MAX_SECONDS } from '../../src/checks/sql.js';
import { notifyListingsDue } from '../../src/checks/listing-leases.js';
import {
  countRows,
  createCompetitor,
  insertListing,
  listingState,
  makeDue,
  nextCheck,
  startWorker,
  useMonitoringTest,
} from './support.js';

/** Scheduled checks by an in-process worker against the fixture site, on the test's database. */

const t = useMonitoringTest();
const T = { timeout: 30_000 };

/** Seconds until the next check after `failures` failures in a row (docs/MONITORING.md). */
const retryDelay = (interval: number, failures: number) =>
  Math.min(Math.max(interval, BACKOFF_CAP_SECONDS), interval * 2 ** (failures - 1));

/** next_check_at - now() must be the delay plus at most its jitter (a second of slack for the test itself). */
function assertDueIn(dueIn: number, delay: number, what: string) {
  const jitter = Math.min(delay * 0.1, JITTER_MAX_SECONDS);
  assert.ok(
    dueIn >= delay - 2 && dueIn <= delay + jitter + 1,
    `${what}: next check in ${dueIn} s, expected ${delay} s + up to ${jitter} s of jitter`,
  );
}

describe('scheduled checks', () => {
  it('checks a listing once it falls due and records the price it finds', T, async () => {
    const worker = startWorker(t);
    await worker.start();
    const competitorId = await createCompetitor(t);
    const path = '/pages/jsonld-basic.html?case=schedule';
    const id = await insertListing(t, { url: t.site.url + path, competitorId, dueIn: 0.3, intervalSeconds: 3600 });
    const due = (await listingState(t.rt.db, id)).next_check_at;

    const { row, outcome } = await nextCheck(worker, id);
    await worker.stop(0);
    assert.ok(outcome.startedAt.getTime() >= due.getTime(), 'not checked before it was due');
    assert.ok(row, 'recorded');
    assert.equal(row.ok, true);
    assert.equal(row.price, '19.9900');
    assert.equal(row.currency, 'USD');
    assert.equal(row.source, 'json-ld');
    assert.equal(row.http_status, 200);
    assert.ok(row.candidates.length >= 1 && row.candidates.some((c) => c.chosen && c.price === 19.99));
    assert.equal(t.site.hits(path), 1);

    const obs = await t.rt.db.query<Record<string, unknown>>(
      `select account_id, product_id, competitor_id, listing_id, price::text as price, currency, in_stock, source, observed_at
         from price_observations where listing_id = $1`,
      [id],
    );
    assert.equal(obs.rows.length, 1);
    assert.deepEqual(
      { ...obs.rows[0], observed_at: undefined },
      {
        account_id: t.account.accountId,
        product_id: t.account.productId,
        competitor_id: competitorId,
        listing_id: id,
        price: '19.9900',
        currency: 'USD',
        in_stock: true,
        source: 'scrape',
        observed_at: undefined,
      },
    );
    assert.equal((obs.rows[0]!.observed_at as Date).getTime(), outcome.checkedAt.getTime());

    const s = await listingState(t.rt.db, id);
    assert.equal(s.status, 'ok');
    assert.equal(s.last_price, '19.9900');
    assert.equal(s.last_currency, 'USD');
    assert.equal(s.in_stock, true);
    assert.equal(s.consecutive_failures, 0);
    assert.equal(s.last_error, null);
    assert.equal(s.locked_by, null);
    assert.equal(s.locked_until, null);
    assertDueIn(s.due_in, 3600, 'after a success');

    // The listing API shows the new state.
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/listings/${id}`, headers: t.account.headers });
    assert.equal(res.statusCode, 200, res.body);
    const listing = res.json<{ status: string; last_price: number; last_currency: string; in_stock: boolean }>();
    assert.deepEqual(
      [listing.status, listing.last_price, listing.last_currency, listing.in_stock],
      ['ok', 19.99, 'USD', true],
    );
  });

  for (const [name, path, code] of [
    ['a 404', '/status/404', 'http_error'],
    ['a page robots.txt disallows', '/private/jsonld-basic.html', 'robots_disallowed'],
    ['a page without a price', '/pages/jsonld-no-offers.html', 'no_price'],
  ] as const) {
    it(
      `${name}: failing, then flagged after ${FLAG_AFTER_FAILURES} failures, with exponential backoff; nothing recorded as a price`,
      T,
      async () => {
        const worker = startWorker(t);
        await worker.start();
        const interval = 300;
        const id = await insertListing(t, { url: t.site.url + path, intervalSeconds: interval });
        for (let n = 1; n <= FLAG_AFTER_FAILURES + 2; n++) {
          if (n > 1) await makeDue(t.rt.db, id);
          const { row, outcome } = await nextCheck(worker, id);
          assert.equal(outcome.ok, false);
          assert.ok(row);
          assert.equal(row.ok, false);
          assert.equal(row.error_code, code, row.error ?? '');
          assert.equal(row.price, null);
          const s = await listingState(t.rt.db, id);
          assert.equal(s.consecutive_failures, n);
          assert.equal(s.status, n >= FLAG_AFTER_FAILURES ? 'flagged' : 'failing', `after ${n} failures`);
          assert.equal(row.listing_status, s.status);
          assert.equal(s.last_error, row.error);
          assert.ok(s.last_error && s.last_error.length > 0);
          assert.equal(s.locked_by, null);
          assertDueIn(s.due_in, retryDelay(interval, n), `after ${n} failures`);
        }
        await worker.stop(0);
        assert.equal(await countRows(t.rt.db, 'price_observations', id), 0);
        assert.equal(await countRows(t.rt.db, 'listing_checks', id), FLAG_AFTER_FAILURES + 2);
        // A page robots.txt disallows is never requested.
        assert.equal(t.site.hits(path), code === 'robots_disallowed' ? 0 : FLAG_AFTER_FAILURES + 2);
      },
    );
  }

  it('a flagged listing that works again is ok again', T, async () => {
    const worker = startWorker(t);
    await worker.start();
    const id = await insertListing(t, { url: `${t.site.url}/status/500`, intervalSeconds: 600 });
    for (let n = 1; n <= FLAG_AFTER_FAILURES; n++) {
      if (n > 1) await makeDue(t.rt.db, id);
      await nextCheck(worker, id);
    }
    assert.equal((await listingState(t.rt.db, id)).status, 'flagged');
    // The user fixes the URL through the API, which makes the listing due at once.
    const checked = nextCheck(worker, id);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${id}`,
      headers: t.account.headers,
      payload: { url: t.site.pageUrl('microdata-de-de.html') },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { row } = await checked;
    await worker.stop(0);
    assert.ok(row);
    assert.equal(row.ok, true, row.error ?? '');
    const s = await listingState(t.rt.db, id);
    assert.deepEqual(
      [s.status, s.consecutive_failures, s.last_error, s.last_price, s.last_currency],
      ['ok', 0, null, '1299.0000', 'EUR'],
    );
    assertDueIn(s.due_in, 600, 'after the first success');
  });

  it('backoff is capped at a day, or at the interval when that is longer', () => {
    assert.equal(retryDelay(21_600, 1), 21_600);
    assert.equal(retryDelay(21_600, 3), 86_400);
    assert.equal(retryDelay(21_600, 9), 86_400);
    assert.equal(retryDelay(604_800, 4), 604_800);
  });

  it(
    'a price without a stated currency fails as unknown_currency; with currency_override it is recorded',
    T,
    async () => {
      const worker = startWorker(t);
      await worker.start();
      const url = t.site.pageUrl('microdata-kr-ambiguous.html');
      const [plain, pinned] = [
        await insertListing(t, { url }),
        await insertListing(t, { url: `${url}?pinned`, currencyOverride: 'SEK' }),
      ];
      const results = await Promise.all([nextCheck(worker, plain), nextCheck(worker, pinned)]);
      await worker.stop(0);
      assert.ok(results[0].row && results[1].row);
      assert.equal(results[0].row.error_code, 'unknown_currency');
      assert.match(results[0].row.error ?? '', /currency_override/);
      assert.equal(await countRows(t.rt.db, 'price_observations', plain), 0);
      assert.equal(results[1].row.ok, true);
      assert.deepEqual([results[1].row.price, results[1].row.currency], ['1299.0000', 'SEK']);
    },
  );

  it('records out-of-stock prices with in_stock false', T, async () => {
    const worker = startWorker(t);
    await worker.start();
    const id = await insertListing(t, { url: t.site.pageUrl('jsonld-out-of-stock.html') });
    const { row } = await nextCheck(worker, id);
    await worker.stop(0);
    assert.ok(row);
    assert.equal(row.ok, true);
    assert.equal(row.in_stock, false);
    const obs = await t.rt.db.query<{ in_stock: boolean }>(
      `select in_stock from price_observations where listing_id = $1`,
      [id],
    );
    assert.deepEqual(obs.rows, [{ in_stock: false }]);
  });

  it('a disabled listing is not checked; a listing not yet due is not checked', T, async () => {
    const worker = startWorker(t);
    const disabled = await insertListing(t, {
      url: `${t.site.pageUrl('jsonld-basic.html')}?disabled`,
      enabled: false,
      dueIn: -60,
    });
    const later = await insertListing(t, { url: `${t.site.pageUrl('jsonld-basic.html')}?later`, dueIn: 3600 });
    const idle = new Promise<void>((resolve) => worker.once('idle', resolve));
    await worker.start();
    await idle;
    await worker.stop(0);
    assert.equal(await countRows(t.rt.db, 'listing_checks', disabled), 0);
    assert.equal(await countRows(t.rt.db, 'listing_checks', later), 0);
    assert.equal(t.site.hits(`/pages/jsonld-basic.html?disabled`) + t.site.hits(`/pages/jsonld-basic.html?later`), 0);
  });

  it('NOTIFY wakes an idle worker at once, long before its next poll', T, async () => {
    const worker = startWorker(t, { pollIntervalMs: 600_000 });
    const idle = new Promise<void>((resolve) => worker.once('idle', resolve));
    await worker.start();
    await idle; // its first claim found nothing; the next poll is ten minutes away
    const id = await insertListing(t, { url: `${t.site.pageUrl('jsonld-basic.html')}?notify` });
    const checked = nextCheck(worker, id);
    await notifyListingsDue(t.rt.db);
    const { row } = await checked;
    await worker.stop(0);
    assert.equal(row?.ok, true);
  });

  it('runs at most WORKER_CONCURRENCY checks at once', T, async () => {
    const worker = startWorker(t, { concurrency: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await insertListing(t, { url: `${t.site.url}/hold/conc-${i}` }));
    const isHold = (r: { path: string }) => r.path.startsWith('/hold/conc-');
    let done = 0;
    const all = new Promise<void>((resolve) =>
      worker.on('checked', (e) => {
        if (ids.includes(e.listingId) && ++done === ids.length) resolve();
      }),
    );
    // Two at a time: the site sees two requests, and only after they are answered the next two.
    let arrived = t.site.waitForRequests(2, isHold);
    await worker.start();
    for (const next of [2, 1, 0]) {
      await arrived;
      assert.equal(t.site.inFlight(isHold), next === 0 ? 1 : 2);
      assert.ok(worker.inFlight <= 2);
      arrived = t.site.waitForRequests(next, isHold);
      t.site.release();
    }
    await all;
    await worker.stop(0);
    // No moment with more than two requests open, from the site's own log.
    const spans = t.site.requests.filter(isHold).map((r) => [r.receivedAt, r.finishedAt ?? Infinity] as const);
    for (const [start] of spans) assert.ok(spans.filter(([s, e]) => s <= start && start < e).length <= 2);
  });

  it('while checks run, claims wait until a quarter of the slots is free (one statement for several)', T, async () => {
    // Concurrency 8: batches of 2. No polls during the test, so only finished checks trigger claims.
    const worker = startWorker(t, { concurrency: 8, pollIntervalMs: 600_000 });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await insertListing(t, { url: `${t.site.url}/hold/batch-${i}` }));
    const isBatch = (r: { path: string }) => r.path.startsWith('/hold/batch-');
    const claims: string[][] = [];
    worker.on('claimed', (c) => claims.push(c));
    const done = new Promise<void>((resolve) => {
      let n = 0;
      worker.on('checked', (e) => {
        if (ids.includes(e.listingId) && ++n === ids.length) resolve();
      });
    });
    const arrived = t.site.waitForRequests(8, isBatch);
    await worker.start();
    await arrived;
    assert.deepEqual(
      claims.map((c) => c.length),
      [8],
    );
    const [a, b] = claims[0]!.map((id) => ids.indexOf(id));

    // One slot frees: not worth a claim yet.
    const first = nextCheck(worker, ids[a!]);
    t.site.release(`batch-${a}`);
    await first;
    assert.deepEqual(
      claims.map((c) => c.length),
      [8],
    );

    // A second one: the two listings left, in one claim.
    const claimedAgain = new Promise<string[]>((resolve) => worker.once('claimed', resolve));
    const rest = t.site.waitForRequests(2, isBatch);
    t.site.release(`batch-${b}`);
    assert.equal((await claimedAgain).length, 2);
    await rest;
    t.site.release();
    await done;
    await worker.stop(0);
    assert.deepEqual(
      claims.map((c) => c.length),
      [8, 2],
    );
    for (const id of ids) assert.equal(await countRows(t.rt.db, 'listing_checks', id), 1);
  });
});
