import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { CheckResult } from '../../src/checks/schemas.js';
import type { Listing } from '../../src/listings/schemas.js';
import { createRule, fired } from '../alerts/engine-support.js';
import { assertDocumentedEvents } from '../events/documented.js';
import { createCompetitor, listingState, makeDue, nextCheck, startWorker, useMonitoringTest } from '../jobs/support.js';
import type { AnyEvent } from '../helpers/api-types.js';

/**
 * Issue 23 point 4 (design/API.md "Checks: a price that cannot be right is held, not recorded"):
 * through the real HTTP interface, with a shop on 127.0.0.1 whose price the test sets.
 * On a series at 49.99, 4999 and 0.4999 are held, 24.99 (a real half-price sale) is recorded; a
 * held reading read again is recorded once with one price.changed; accept and reject by hand.
 */

const t = useMonitoringTest();
const T = { timeout: 60_000 };

/** The shop's pages: path -> [price, currency]. */
const shop = new Map<string, [string, string]>();
let server: http.Server;
let base: string;

const page = ([price, currency]: [string, string]) =>
  '<!doctype html><html><head><meta charset="utf-8"><title>Kettle</title>' +
  '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Kettle",' +
  `"offers":{"@type":"Offer","price":"${price}","priceCurrency":"${currency}","availability":"https://schema.org/InStock"}}</script>` +
  '</head><body><h1>Kettle</h1></body></html>\n';

before(async () => {
  server = http.createServer((req, res) => {
    const p = shop.get(new URL(req.url ?? '/', 'http://shop.invalid').pathname);
    if (!p)
      return void res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>Not found</title>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(p));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

let competitor: Promise<string> | undefined;
let seq = 0;

interface Series {
  productId: string;
  listingId: string;
  path: string;
  /** What the shop shows from now on. */
  show(price: string, currency?: string): void;
}

/**
 * A product of its own (so a series of its own) and its listing at the shop, with the first
 * check recorded at `first` (49.99 EUR unless given). Disabled unless `enabled`: "check now"
 * drives it, and no worker claims it.
 */
async function series(
  opts: { first?: string; listing?: Record<string, unknown>; enabled?: boolean } = {},
): Promise<Series> {
  const { headers } = t.account;
  competitor ??= createCompetitor(t, 'Held shop');
  const competitorId = await competitor;
  const n = ++seq;
  const product = await t.app.inject({
    method: 'POST',
    url: '/api/v1/products',
    headers,
    payload: { name: `Kettle ${n}`, base_price: 50, currency: 'EUR', sku: `HELD-${n}` },
  });
  assert.equal(product.statusCode, 201, product.body);
  const productId = product.json<{ id: string }>().id;
  const path = `/kettle-${n}`;
  const show = (price: string, currency = 'EUR') => void shop.set(path, [price, currency]);
  show(opts.first ?? '49.99');
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/listings',
    headers,
    payload: {
      product_id: productId,
      competitor_id: competitorId,
      url: base + path,
      check_interval_seconds: 3600,
      enabled: opts.enabled ?? false,
      ...opts.listing,
    },
  });
  assert.equal(created.statusCode, 201, created.body);
  const listingId = created.json<{ id: string }>().id;
  const s = { productId, listingId, path, show };
  const first = await checkNow(s);
  assert.equal(first.outcome, 'recorded', JSON.stringify(first));
  return s;
}

async function checkNow(s: Pick<Series, 'listingId'>): Promise<CheckResult> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/listings/${s.listingId}/check`,
    headers: t.account.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<CheckResult>();
}

const answer = (
  s: Pick<Series, 'listingId'>,
  checkId: string,
  what: 'accept' | 'reject',
  headers = t.account.headers,
  extra: { payload?: string; contentType?: string } = {},
) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/listings/${s.listingId}/checks/${checkId}/${what}`,
    headers: { ...headers, ...(extra.contentType ? { 'content-type': extra.contentType } : {}) },
    ...(extra.payload !== undefined ? { payload: extra.payload } : {}),
  });

async function getListing(s: Pick<Series, 'listingId'>): Promise<Listing> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/listings/${s.listingId}`, headers: t.account.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Listing>();
}

async function checkLog(s: Pick<Series, 'listingId'>, query = ''): Promise<CheckResult[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/listings/${s.listingId}/checks${query}`,
    headers: t.account.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: CheckResult[] }>().data;
}

/** The account's events of `type` about the series' product (price changes) or listing (checks), oldest first. */
async function events(s: Series, type: string): Promise<AnyEvent[]> {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/events?type=${type}&sort=created_at&limit=100`,
    headers: t.account.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res
    .json<{ data: AnyEvent[] }>()
    .data.filter((e) => e.data.product_id === s.productId || e.data.listing_id === s.listingId);
}

async function observations(s: Series): Promise<{ price: string; currency: string; observed_at: Date }[]> {
  const r = await t.rt.db.query<{ price: string; currency: string; observed_at: Date }>(
    'select price::text as price, currency, observed_at from price_observations where product_id = $1 order by observed_at, id',
    [s.productId],
  );
  return r.rows;
}

describe('a reading that cannot be right is held', () => {
  it(
    'on a series at 49.99, 4999 is held: no observation, no price.changed, no alert; a listing.price_held event; the log and the listing show it',
    T,
    async () => {
      const s = await series();
      const rule = await createRule(t, t.account.headers, {
        product_id: s.productId,
        condition: { type: 'price_above', threshold: 100, currency: 'EUR' },
      });
      const before = await listingState(t.rt.db, s.listingId);
      s.show('4999');
      const held = await checkNow(s);
      assert.equal(held.outcome, 'held');
      assert.equal(held.ok, false, 'ok stays true only for recorded');
      assert.deepEqual(
        [held.price, held.currency, held.error_code, held.error],
        [4999, 'EUR', null, null],
        'the price it read',
      );
      assert.ok(held.held);
      assert.deepEqual(
        { ...held.held, reason: undefined },
        {
          reason: undefined,
          previous_price: 49.99,
          previous_currency: 'EUR',
          factor: 100,
          confirmed_by: null,
          state: 'pending',
          resolved_at: null,
        },
      );
      assert.match(held.held.reason, /4999 EUR.*100 times.*49\.99 EUR/);

      assert.deepEqual(
        (await observations(s)).map((o) => o.price),
        ['49.9900'],
        'no observation',
      );
      assert.deepEqual(await events(s, 'price.changed'), []);
      assert.deepEqual(await fired(t, t.account.headers, rule), [], 'no alert: 4999 would be above 100');
      const heldEvents = await events(s, 'listing.price_held');
      assert.equal(heldEvents.length, 1);
      assert.deepEqual(heldEvents[0]!.data, held as unknown, 'the event carries the check as the log lists it');
      await assertDocumentedEvents(t.app, heldEvents);
      assert.deepEqual(await events(s, 'listing.check_failed'), [], 'a held reading is not a failure');

      const after = await listingState(t.rt.db, s.listingId);
      assert.deepEqual(
        [after.status, after.consecutive_failures, after.last_price, after.last_error],
        ['ok', 0, '49.9900', null],
        'no price, no failure',
      );
      assert.ok(after.last_checked_at! > before.last_checked_at!, 'last_checked_at says a check ran');
      assert.equal(after.last_success_at!.getTime(), before.last_success_at!.getTime());

      const listing = await getListing(s);
      assert.equal(listing.last_price, 49.99);
      assert.ok(listing.held);
      assert.deepEqual(
        { ...listing.held, checked_at: undefined },
        {
          check_id: held.id,
          price: 4999,
          currency: 'EUR',
          in_stock: true,
          reason: held.held.reason,
          checked_at: undefined,
        },
      );
      assert.equal(listing.held.checked_at, after.last_checked_at!.toISOString());
      const heldListings = await t.app.inject({
        method: 'GET',
        url: `/api/v1/listings?held=true&product_id=${s.productId}`,
        headers: t.account.headers,
      });
      assert.deepEqual(
        heldListings.json<{ data: Listing[] }>().data.map((l) => l.id),
        [s.listingId],
      );

      const log = await checkLog(s);
      assert.deepEqual(log[0], held, 'the check log shows the held reading with its reason');
      assert.deepEqual(
        (await checkLog(s, '?outcome=held')).map((c) => c.id),
        [held.id],
      );
      assert.deepEqual(
        (await checkLog(s, '?outcome=recorded')).map((c) => c.outcome),
        ['recorded'],
      );
      assert.deepEqual(await checkLog(s, '?outcome=failed'), []);
      assert.deepEqual(
        (await checkLog(s, '?ok=false')).map((c) => c.id),
        [held.id],
      );
    },
  );

  it(
    '0.4999 is held too (a fall); the page back at 49.99 records no change and the held reading is superseded',
    T,
    async () => {
      const s = await series();
      s.show('0.4999');
      const held = await checkNow(s);
      assert.equal(held.outcome, 'held');
      assert.equal(held.price, 0.4999);
      assert.equal(held.held?.factor, 100);
      assert.match(held.held?.reason ?? '', /100 times lower.*fall of 99 %/);
      s.show('49.99');
      const back = await checkNow(s);
      assert.deepEqual([back.outcome, back.held], ['recorded', null]);
      assert.deepEqual(
        (await observations(s)).map((o) => o.price),
        ['49.9900', '49.9900'],
      );
      assert.deepEqual(await events(s, 'price.changed'), [], 'the same price is no change');
      const [first] = await checkLog(s, '?outcome=held');
      assert.deepEqual([first?.id, first?.held?.state], [held.id, 'superseded']);
      assert.equal((await getListing(s)).held, null);
      const late = await answer(s, held.id, 'accept');
      assert.equal(late.statusCode, 409, late.body);
      assert.match(late.json<{ error: string }>().error, /later check replaced/);
    },
  );

  it('24.99, a real half-price sale, is recorded with one price.changed', T, async () => {
    const s = await series();
    s.show('24.99');
    const sale = await checkNow(s);
    assert.deepEqual([sale.outcome, sale.ok, sale.price, sale.held], ['recorded', true, 24.99, null]);
    const changes = await events(s, 'price.changed');
    assert.equal(changes.length, 1);
    assert.deepEqual(
      [(changes[0]!.data.old as { price: number }).price, (changes[0]!.data.new as { price: number }).price],
      [49.99, 24.99],
    );
  });

  it('the factor is exact: 4 times up or down is held, a cent less is recorded', T, async () => {
    const up = await series({ first: '50' });
    up.show('199.99');
    assert.equal((await checkNow(up)).outcome, 'recorded', '199.99 is less than 4 x 50');
    const down = await series({ first: '50' });
    down.show('12.5');
    const held = await checkNow(down);
    assert.deepEqual([held.outcome, held.held?.factor], ['held', 4], 'exactly a quarter');
    down.show('200');
    const up4 = await checkNow(down);
    assert.deepEqual([up4.outcome, up4.held?.factor], ['held', 4], 'exactly four times; it replaces the held 12.5');
    assert.equal((await getListing(down)).held?.price, 200);
  });

  it(
    "a reading in another currency is held; hold_factor 0 never holds, and a listing's own factor is used",
    T,
    async () => {
      const s = await series();
      s.show('49.99', 'USD');
      const other = await checkNow(s);
      assert.equal(other.outcome, 'held');
      assert.deepEqual([other.held?.factor, other.held?.previous_currency, other.currency], [null, 'EUR', 'USD']);
      assert.match(other.held?.reason ?? '', /another currency/);

      const never = await series({ listing: { hold_factor: 0 } });
      never.show('4999');
      assert.equal((await checkNow(never)).outcome, 'recorded');
      assert.equal((await events(never, 'price.changed')).length, 1);

      const strict = await series({ listing: { hold_factor: 1.5 } });
      strict.show('74.98');
      assert.equal((await checkNow(strict)).outcome, 'recorded', '74.98 is less than 1.5 x 49.99');
      strict.show('112.47');
      const held = await checkNow(strict);
      assert.deepEqual([held.outcome, held.held?.factor], ['held', 1.5], 'exactly 1.5 x 74.98');
      const patched = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/listings/${strict.listingId}`,
        headers: t.account.headers,
        payload: { hold_factor: null },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json<Listing>().hold_factor, null);
      assert.equal(patched.json<Listing>().held?.check_id, held.id, 'a new factor keeps the held reading');
      strict.show('112.48');
      assert.equal((await checkNow(strict)).outcome, 'recorded', 'the account default, 4, applies again');
    },
  );

  it('prices sent by POST /prices are never held', T, async () => {
    const s = await series();
    const competitorId = await competitor!;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/prices',
      headers: t.account.headers,
      payload: {
        observations: [{ product_id: s.productId, competitor_id: competitorId, price: 4999, currency: 'EUR' }],
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      (await observations(s)).map((o) => o.price),
      ['49.9900', '4999.0000'],
    );
    assert.equal((await events(s, 'price.changed')).length, 1);
  });
});

describe('accept and reject', () => {
  it(
    "accept records the held reading with the held check's time: one observation, one price.changed, the listing's price",
    T,
    async () => {
      const s = await series({ enabled: true });
      s.show('4999');
      const held = await checkNow(s);
      const heldAt = (await getListing(s)).held!.checked_at;
      assert.ok((await listingState(t.rt.db, s.listingId)).due_in <= 300, 'a recheck within five minutes');
      const res = await answer(s, held.id, 'accept');
      assert.equal(res.statusCode, 200, res.body);
      const accepted = res.json<CheckResult>();
      assert.equal(accepted.id, held.id);
      assert.deepEqual([accepted.outcome, accepted.held?.state], ['held', 'accepted']);
      assert.ok(accepted.held?.resolved_at);
      const obs = await observations(s);
      assert.deepEqual(
        obs.map((o) => o.price),
        ['49.9900', '4999.0000'],
      );
      assert.equal(obs[1]!.observed_at.toISOString(), heldAt, "recorded with the held check's time");
      const changes = await events(s, 'price.changed');
      assert.equal(changes.length, 1);
      assert.equal((changes[0]!.data.new as { price: number }).price, 4999);
      const listing = await getListing(s);
      assert.deepEqual(
        [listing.last_price, listing.status, listing.held, listing.last_success_at],
        [4999, 'ok', null, heldAt],
      );
      assert.ok(
        (await listingState(t.rt.db, s.listingId)).due_in > 3000,
        'back on its schedule: the early recheck is not needed',
      );
      assert.deepEqual((await checkLog(s))[0], accepted);

      for (const what of ['accept', 'reject'] as const) {
        const again = await answer(s, held.id, what);
        assert.equal(again.statusCode, 409, again.body);
        assert.equal(again.json<{ code: string }>().code, 'conflict');
        assert.match(again.json<{ error: string }>().error, /already accepted/);
      }
      assert.equal((await observations(s)).length, 2, 'nothing changed');
      assert.equal((await events(s, 'price.changed')).length, 1);

      const next = await checkNow(s);
      assert.deepEqual(
        [next.outcome, next.price],
        ['recorded', 4999],
        'the accepted price is the one the next reading is judged against',
      );
      assert.equal((await events(s, 'price.changed')).length, 1);
    },
  );

  it(
    'reject records nothing and the listing goes on as before; the same reading is held again, never confirmed by a recheck, until accepted',
    T,
    async () => {
      const s = await series({ enabled: true });
      s.show('4999');
      const held = await checkNow(s);
      const res = await answer(s, held.id, 'reject');
      assert.equal(res.statusCode, 200, res.body);
      const rejected = res.json<CheckResult>();
      assert.deepEqual([rejected.outcome, rejected.held?.state], ['held', 'rejected']);
      const listing = await getListing(s);
      assert.deepEqual([listing.last_price, listing.status, listing.held], [49.99, 'ok', null]);
      assert.ok((await listingState(t.rt.db, s.listingId)).due_in > 3000, 'back on its schedule');
      assert.equal((await observations(s)).length, 1);
      assert.deepEqual(await events(s, 'price.changed'), []);

      for (const what of ['reject', 'accept'] as const) {
        const again = await answer(s, held.id, what);
        assert.equal(again.statusCode, 409, again.body);
        assert.match(again.json<{ error: string }>().error, /already rejected/);
      }

      const heldAgain = await checkNow(s);
      assert.equal(heldAgain.outcome, 'held');
      assert.match(heldAgain.held?.reason ?? '', /rejected this same reading/);
      assert.ok(
        (await listingState(t.rt.db, s.listingId)).due_in > 3000,
        'no early recheck for a reading a person rejected',
      );
      const stillHeld = await checkNow(s);
      assert.deepEqual(
        [stillHeld.outcome, stillHeld.held?.confirmed_by],
        ['held', null],
        'read again, it is not recorded',
      );
      assert.equal((await observations(s)).length, 1);
      const ok = await answer(s, stillHeld.id, 'accept');
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal((await events(s, 'price.changed')).length, 1);
      assert.equal((await getListing(s)).last_price, 4999);
    },
  );

  it(
    "refuses what is not the listing's pending held reading, another account's, unknown ids and bodies, with the one error shape, changing nothing",
    T,
    async () => {
      const s = await series();
      const recorded = (await checkLog(s))[0]!;
      s.show('4999');
      const held = await checkNow(s);
      const other = await series();
      const otherCheck = (await checkLog(other))[0]!;
      shop.delete(other.path);
      const failed = await checkNow(other);
      assert.equal(failed.outcome, 'failed');

      const stranger = await t.newKey('business');
      const cases: [string, Promise<Awaited<ReturnType<typeof answer>>>, number, string, RegExp?][] = [
        ['a recorded check', answer(s, recorded.id, 'accept'), 409, 'conflict', /recorded its price/],
        ['a failed check', answer(other, failed.id, 'reject'), 409, 'conflict', /failed and read no price/],
        ["another listing's check", answer(other, held.id, 'accept'), 404, 'not_found', /Check not found/],
        ['a check under another listing', answer(s, otherCheck.id, 'accept'), 404, 'not_found', /Check not found/],
        [
          "another account's listing and check",
          answer(s, held.id, 'accept', stranger.headers),
          404,
          'not_found',
          /Listing not found/,
        ],
        [
          'an unknown listing',
          answer({ listingId: 'lst_nope' }, held.id, 'accept'),
          404,
          'not_found',
          /Listing not found/,
        ],
        [
          'an unknown check',
          answer(s, 'chk_0000000000000000000000000a', 'reject'),
          404,
          'not_found',
          /Check not found/,
        ],
        ['a check id of another kind', answer(s, 'obs_0000000000000000000000000a', 'accept'), 404, 'not_found'],
        [
          'a body',
          answer(s, held.id, 'accept', t.account.headers, { payload: '{"price": 49.99}' }),
          422,
          'validation_failed',
          /takes no request body/,
        ],
        ['broken JSON', answer(s, held.id, 'reject', t.account.headers, { payload: '{"price":' }), 400, 'invalid_json'],
        [
          'a body that is not JSON',
          answer(s, held.id, 'accept', t.account.headers, { payload: 'accept', contentType: 'text/plain' }),
          415,
          'unsupported_media_type',
        ],
      ];
      for (const [what, pending, status, code, message] of cases) {
        const res = await pending;
        assert.equal(res.statusCode, status, `${what}: ${res.body}`);
        const body = res.json<{ error: string; status: number; code: string; request_id: string }>();
        assert.deepEqual([body.status, body.code, typeof body.request_id], [status, code, 'string'], what);
        if (message) assert.match(res.body, message, what);
      }
      const listing = await getListing(s);
      assert.deepEqual([listing.held?.check_id, listing.last_price], [held.id, 49.99], 'still held, nothing recorded');
      assert.equal((await checkLog(s))[0]!.held?.state, 'pending');
      assert.equal((await observations(s)).length, 1);

      // A retry of an answer with its Idempotency-Key replays the first answer instead of a 409.
      const key = { ...t.account.headers, 'idempotency-key': `held-${held.id}` };
      const first = await answer(s, held.id, 'reject', key);
      const retry = await answer(s, held.id, 'reject', key);
      assert.deepEqual([first.statusCode, retry.statusCode, retry.headers['idempotent-replayed']], [200, 200, 'true']);
      assert.equal(retry.body, first.body);
    },
  );

  it('a re-pointed listing drops its held reading', T, async () => {
    const s = await series();
    s.show('4999');
    const held = await checkNow(s);
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/listings/${s.listingId}`,
      headers: t.account.headers,
      payload: { url: `${base}${s.path}?v=2` },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<Listing>().held, null);
    assert.equal((await checkLog(s, '?outcome=held'))[0]?.held?.state, 'superseded');
    assert.equal((await answer(s, held.id, 'accept')).statusCode, 409);
  });

  it('hold_factor: 0, more than 1 up to 1000, or null; anything else is a 422 naming it', T, async () => {
    const { headers, productId } = t.account;
    for (const bad of [0.5, 1, 1001, -1, 'four']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/listings',
        headers,
        payload: { product_id: productId, url: `${base}/bad-factor`, hold_factor: bad },
      });
      assert.equal(res.statusCode, 422, `${bad}: ${res.body}`);
      assert.ok(
        res.json<{ details: { field: string }[] }>().details.some((d) => d.field === 'hold_factor'),
        res.body,
      );
    }
    const refused = await t.rt.db.query<{ n: number }>('select count(*)::int as n from listings where url like $1', [
      '%/bad-factor',
    ]);
    assert.equal(refused.rows[0]!.n, 0, 'none created');
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v1/listings',
      headers,
      payload: { product_id: productId, url: `${base}/good-factor`, hold_factor: 2.5, enabled: false },
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual([ok.json<Listing>().hold_factor, ok.json<Listing>().held], [2.5, null]);
  });
});

describe('the recheck', () => {
  // Last: its worker claims every enabled listing that is due.
  it(
    'runs within five minutes and records the held reading read again, once, with one price.changed naming the first',
    T,
    async () => {
      const s = await series({ enabled: true });
      const rule = await createRule(t, t.account.headers, {
        product_id: s.productId,
        condition: { type: 'price_above', threshold: 100, currency: 'EUR' },
      });
      s.show('4999');
      const held = await checkNow(s);
      assert.equal(held.outcome, 'held');
      const due = (await listingState(t.rt.db, s.listingId)).due_in;
      assert.ok(due > 200 && due <= 300, `the next check within five minutes (in ${due} s)`);

      const worker = startWorker(t);
      await worker.start();
      await makeDue(t.rt.db, s.listingId); // the five minutes, passed
      const { row } = await nextCheck(worker, s.listingId);
      assert.ok(row);
      const [confirming, first] = await checkLog(s);
      assert.ok(confirming && first);
      assert.deepEqual(
        [confirming.outcome, confirming.ok, confirming.price, confirming.held?.confirmed_by, confirming.held?.state],
        ['recorded', true, 4999, held.id, 'confirmed'],
      );
      assert.equal(confirming.held?.reason, held.held?.reason);
      assert.deepEqual([first.id, first.held?.state, first.held?.confirmed_by], [held.id, 'confirmed', confirming.id]);
      assert.deepEqual(
        (await observations(s)).map((o) => o.price),
        ['49.9900', '4999.0000'],
        'recorded once',
      );
      const changes = await events(s, 'price.changed');
      assert.equal(changes.length, 1);
      assert.deepEqual(
        [(changes[0]!.data.old as { price: number }).price, (changes[0]!.data.new as { price: number }).price],
        [49.99, 4999],
      );
      assert.equal(
        (await fired(t, t.account.headers, rule)).length,
        1,
        'the confirmed price is a price: the rule fires once',
      );
      const listing = await getListing(s);
      assert.deepEqual([listing.last_price, listing.held], [4999, null]);
      assert.ok((await listingState(t.rt.db, s.listingId)).due_in > 3000, 'then back to its interval');
      const late = await answer(s, held.id, 'accept');
      assert.equal(late.statusCode, 409);
      assert.match(late.json<{ error: string }>().error, /already recorded: check chk_/);
    },
  );
});
