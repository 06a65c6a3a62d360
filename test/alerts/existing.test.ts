import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import type { Headers } from '../products/support.js';
import { ingestOk } from '../prices/ingest-support.js';
import { at, catalogue, createRule, fired, pricesOf, series } from './engine-support.js';
import type { Catalogue } from '../prices/ingest-support.js';
import type { AlertEvent, AlertMatches, ApiError } from '../helpers/api-types.js';

/**
 * What already holds when a rule starts (docs/alerts/firing.md, "What already holds"):
 * POST /alerts/matches shows it, and `fire_existing` fires it now (true) or takes it in
 * silently (false, the default) so that it fires once it has cleared and holds again.
 */

const t = useTestApp();

const matches = (headers: Headers, payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/api/v1/alerts/matches', headers, payload: payload as object });

async function matchesOk(headers: Headers, payload: object): Promise<AlertMatches> {
  const res = await matches(headers, { name: 'm', ...payload });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<AlertMatches>();
}

/** Shop A at 44 (below 45), Shop B at 47, our own shop at 49: stored before any rule exists. */
async function market(): Promise<Catalogue> {
  const c = await catalogue(t);
  await ingestOk(t, c.headers, [
    { product_id: c.productId, competitor_id: c.competitorId, price: 46, currency: 'EUR', observed_at: at(0) },
    { product_id: c.productId, competitor_id: c.competitorId, price: 44, currency: 'EUR', observed_at: at(1) },
    { product_id: c.productId, competitor_id: c.competitor2Id, price: 47, currency: 'EUR', observed_at: at(1) },
    { product_id: c.productId, price: 49, currency: 'EUR', observed_at: at(1) },
  ]);
  return c;
}

async function counts(accountId: string): Promise<{ events: number; states: number }> {
  const r = await t.rt.db.query<{ events: number; states: number }>(
    `select (select count(*)::int from alert_events where account_id = $1) as events,
            (select count(*)::int from alert_states s join alerts a on a.id = s.alert_id where a.account_id = $1) as states`,
    [accountId],
  );
  return r.rows[0]!;
}

const below45 = { condition: { type: 'price_below', threshold: 45 } };

describe('what already holds when a rule starts', () => {
  it('POST /alerts/matches answers the series that meet the condition now, with the message an event would carry, and writes nothing', async () => {
    const c = await market();
    const got = await matchesOk(c.headers, below45);
    assert.equal(got.count, 1);
    assert.equal(got.data.length, 1);
    const m = got.data[0]!;
    assert.equal(m.product_id, c.productId);
    assert.equal(m.product_name, 'Kettle');
    assert.equal(m.competitor_id, c.competitorId);
    assert.equal(m.competitor_name, 'Shop A');
    assert.equal(m.condition_type, 'price_below');
    assert.deepEqual(m.current, { price: 44, currency: 'EUR', in_stock: null, observed_at: at(1) });
    assert.equal(m.previous?.price, 46);
    assert.equal(m.message, "Shop A's price of Kettle is 44.00 EUR, below the threshold of 45.00 EUR.");

    // Our own series is watched only with series: own; a threshold nothing meets answers none.
    assert.equal(
      (await matchesOk(c.headers, { condition: { type: 'price_below', threshold: 50, series: 'own' } })).count,
      1,
    );
    assert.equal((await matchesOk(c.headers, { condition: { type: 'price_below', threshold: 40 } })).count, 0);
    // Undercut: our price is 49 (our own series), both competitors are below it; with a margin of 5 % (46.55) only Shop A.
    const undercut = await matchesOk(c.headers, { product_id: c.productId, condition: { type: 'undercut' } });
    assert.deepEqual(
      undercut.data.map((x) => x.competitor_name),
      ['Shop A', 'Shop B'],
    );
    const margin = await matchesOk(c.headers, { condition: { type: 'undercut', margin_percent: 5 } });
    assert.deepEqual(
      margin.data.map((x) => x.competitor_id),
      [c.competitorId],
    );
    // A change condition: the latest observation against the one before it (46 -> 44 is a drop of 4.35 %).
    assert.equal((await matchesOk(c.headers, { condition: { type: 'price_drop', percent: 4 } })).count, 1);
    assert.equal((await matchesOk(c.headers, { condition: { type: 'price_drop', percent: 5 } })).count, 0);
    // Scope narrows it: Shop B alone meets nothing below 45.
    assert.equal((await matchesOk(c.headers, { ...below45, competitor_id: c.competitor2Id })).count, 0);
    // not_cheapest: we are dearest (rank 3 of 3) now.
    const rank = await matchesOk(c.headers, { condition: { type: 'not_cheapest' } });
    assert.equal(rank.count, 1);
    assert.match(rank.data[0]!.message, /no longer cheapest with us: our price now ranks 3/);
    assert.deepEqual(await counts(c.accountId), { events: 0, states: 0 });
  });

  it('a rule created with fire_existing fires the matching series now, once, and then again only after they clear', async () => {
    const c = await market();
    const id = await createRule(t, c.headers, { ...below45, fire_existing: true });
    const now = await fired(t, c.headers, id);
    assert.equal(now.length, 1);
    const e = now[0]!;
    assert.equal(e.competitor_id, c.competitorId);
    assert.equal(e.message, "Shop A's price of Kettle is 44.00 EUR, below the threshold of 45.00 EUR.");
    assert.equal(e.current?.price, 44);
    assert.equal(e.test, false);
    const listed = await t.app.inject({
      method: 'GET',
      url: `/api/v1/alert-events?alert_id=${id}`,
      headers: c.headers,
    });
    assert.equal(listed.json<{ data: AlertEvent[] }>().data.length, 1);
    // Still below: no second firing (the rule fired on this condition already); above, then below again: it fires.
    await series(t, c, [43, 42], {}, 2);
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [44]);
    await series(t, c, [48, 41], {}, 4);
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [44, 41]);
  });

  it('without fire_existing, the matching series are taken in silently: they fire once they have cleared and meet the condition again', async () => {
    const c = await market();
    const id = await createRule(t, c.headers, below45);
    assert.equal((await fired(t, c.headers, id)).length, 0);
    assert.equal((await counts(c.accountId)).states, 1);
    await series(t, c, [43, 42], {}, 2);
    assert.equal((await fired(t, c.headers, id)).length, 0, 'an undercut known when the rule was written');
    await series(t, c, [48, 41], {}, 4);
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [41]);
    // Another series coming to meet it fires at once, as before.
    await ingestOk(t, c.headers, [
      { product_id: c.productId, competitor_id: c.competitor2Id, price: 40, currency: 'EUR', observed_at: at(10) },
    ]);
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [41, 40]);
  });

  it('fire_existing respects the rule: a change condition fires on the latest change, a failing listing on its failures', async () => {
    const c = await market();
    const drop = await createRule(t, c.headers, { condition: { type: 'price_drop', percent: 4 }, fire_existing: true });
    const [e] = await fired(t, c.headers, drop);
    assert.equal(e?.message, "Shop A's price of Kettle fell from 46.00 EUR to 44.00 EUR (-4.35%).");
    assert.notEqual(e?.sequence, null);
    // A listing that failed 3 times in a row is failing now.
    await t.rt.db.query(
      `update listings set consecutive_failures = 3, last_checked_at = now(), status = 'flagged' where id = $1`,
      [c.listingId],
    );
    const failing = await matchesOk(c.headers, { condition: { type: 'listing_failing' } });
    assert.deepEqual(
      failing.data.map((m) => [m.listing_id, m.current]),
      [[c.listingId, null]],
    );
    assert.match(failing.data[0]!.message, /failed 3 times in a row/);
    assert.equal((await matchesOk(c.headers, { condition: { type: 'listing_failing', failures: 4 } })).count, 0);
  });

  it('a new condition on PATCH starts the rule afresh, taking in or firing what holds then', async () => {
    const c = await market();
    const id = await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 40 } });
    const patch = (payload: object) =>
      t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${id}`, headers: c.headers, payload });
    // fire_existing needs a new condition or scope.
    const bad = await patch({ name: 'renamed', fire_existing: true });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json<ApiError>().details?.[0]?.field, 'fire_existing');
    const ok = await patch({ condition: { type: 'price_below', threshold: 45 }, fire_existing: true });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json<{ fire_existing?: unknown }>().fire_existing, undefined, 'not stored');
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [44]);
    // A new condition without fire_existing: taken in silently.
    const silent = await patch({ condition: { type: 'price_below', threshold: 48 } });
    assert.equal(silent.statusCode, 200, silent.body);
    await series(t, c, [43], {}, 2);
    assert.deepEqual(pricesOf(await fired(t, c.headers, id)), [44]);
  });

  it('refuses what it cannot answer, in the one error shape', async () => {
    const c = await market();
    const other = await catalogue(t);
    const cases: [object, string][] = [
      [{ ...below45, unknown: 1 }, ''],
      [{ ...below45, fire_existing: true }, ''],
      [{ condition: { type: 'price_below' } }, 'condition.threshold'],
      [{ condition: { type: 'price_drop' } }, 'condition'],
      [{ ...below45, product_id: other.productId }, 'product_id'],
      [{ ...below45, competitor_id: other.competitorId }, 'competitor_id'],
      [{ ...below45, listing_id: other.listingId }, 'listing_id'],
      [{ condition: { type: 'price_below', threshold: 1e300 } }, 'condition.threshold'],
    ];
    for (const [body, field] of cases) {
      const res = await matches(c.headers, { name: 'm', ...body });
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      const err = res.json<ApiError>();
      assert.equal(err.code, 'validation_failed', res.body);
      if (field)
        assert.ok(
          err.details?.some((d) => d.field === field),
          res.body,
        );
    }
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts/matches',
      headers: c.headers,
      payload: '{"name": ',
    });
    assert.equal(malformed.statusCode, 400, malformed.body);
    // A disabled rule fires nothing: fire_existing with enabled false is refused and creates nothing.
    const disabled = await t.app.inject({
      method: 'POST',
      url: '/api/v1/alerts',
      headers: c.headers,
      payload: { name: 'off', ...below45, enabled: false, fire_existing: true },
    });
    assert.equal(disabled.statusCode, 422, disabled.body);
    assert.equal(disabled.json<ApiError>().details?.[0]?.field, 'fire_existing');
    assert.deepEqual(await counts(c.accountId), { events: 0, states: 0 });
    // Writes nothing: a read key may ask.
    const read = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: c.headers,
      payload: { name: 'reader', scope: 'read' },
    });
    assert.equal(read.statusCode, 201, read.body);
    const readHeaders = { ...c.headers, authorization: `Bearer ${read.json<{ secret: string }>().secret}` };
    assert.equal((await matchesOk(readHeaders, below45)).count, 1);
  });
});
