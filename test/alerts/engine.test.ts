import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drainAlertBacklog } from '../../src/alerts/engine/backlog.js';
import { useTestApp } from '../helpers/app.js';
import { ingest, ingestOk } from '../prices/ingest-support.js';
import { ALERT_EVENT_KEYS, at, catalogue, createRule, fired, pricesOf, series } from './engine-support.js';

/** Live evaluation: rules fire from POST /prices in the transaction that records the prices (docs/alerts/firing.md). */

const t = useTestApp();
const hoursOf = (events: { current: { observed_at: string } | null }[]) =>
  events.map((e) => (Date.parse(e.current!.observed_at) - Date.parse(at(0))) / 3_600_000);

describe('alert engine: conditions', () => {
  it('price_below fires once, re-arms when the price is back at the threshold; the event is the alert event at GET /events', async () => {
    const c = await catalogue(t);
    const id = await createRule(t, c.headers, {
      product_id: c.productId,
      condition: { type: 'price_below', threshold: 45 },
    });
    await series(t, c, [50, 44, 43, 46, 44]);
    const events = await fired(t, c.headers);
    assert.deepEqual(pricesOf(events), [44, 44]);
    assert.deepEqual(hoursOf(events), [1, 4]);
    const [e] = events;
    assert.deepEqual(Object.keys(e!).sort(), ALERT_EVENT_KEYS);
    assert.match(e!.id!, /^alev_[0-9a-z]{26}$/);
    assert.equal(e!.object, 'alert_event');
    assert.equal(e!.alert_id, id);
    assert.equal(e!.condition_type, 'price_below');
    assert.deepEqual([e!.product_id, e!.competitor_id, e!.listing_id], [c.productId, c.competitorId, null]);
    assert.deepEqual(e!.previous, { price: 50, currency: 'EUR', in_stock: null, observed_at: at(0) });
    assert.deepEqual(e!.current, { price: 44, currency: 'EUR', in_stock: null, observed_at: at(1) });
    assert.equal(e!.sequence, 1, "the change 50 -> 44 is the series' first");
    assert.equal(events[1]!.sequence, 4);
    assert.equal(e!.test, false);
    assert.equal(e!.acknowledged_at, null);
    assert.match(e!.message, /Shop A's price of Kettle is 44\.00 EUR, below the threshold of 45\.00 EUR\./);
  });

  it('hysteresis: on_clear re-arms only past the band', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, {
      competitor_id: c.competitorId,
      condition: { type: 'price_below', threshold: 45 },
      hysteresis_percent: 10,
    });
    // 46 is back above 45 but inside the band (< 49.5): no re-arm, so the next 44 is quiet.
    await series(t, c, [44, 46, 44, 49.5, 44]);
    assert.deepEqual(hoursOf(await fired(t, c.headers)), [0, 4]);
  });

  it("price_above in the product's currency by default, re-armed below", async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_above', threshold: 60 } });
    await series(t, c, [55, 61, 65, 60, 70]);
    assert.deepEqual(pricesOf(await fired(t, c.headers)), [61, 70]);
  });

  it('cooldown fires again while true, not within cooldown_seconds (by observation time)', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, {
      condition: { type: 'price_below', threshold: 45 },
      rearm: 'cooldown',
      cooldown_seconds: 7200,
    });
    await series(t, c, [40, 40, 40, 40, 40]);
    assert.deepEqual(hoursOf(await fired(t, c.headers)), [0, 2, 4]);
  });

  it('every_change fires on every qualifying observation', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 }, rearm: 'every_change' });
    await series(t, c, [40, 41, 50, 42]);
    assert.deepEqual(pricesOf(await fired(t, c.headers)), [40, 41, 42]);
  });

  it('confirmations: the condition must hold on N observations in a row', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 }, confirmations: 2 });
    await series(t, c, [44, 44, 50, 44, 50, 44, 43]);
    assert.deepEqual(hoursOf(await fired(t, c.headers)), [1, 6]);
  });

  it('daily_cap bounds firings per rule per UTC day', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, {
      condition: { type: 'price_below', threshold: 45 },
      rearm: 'every_change',
      daily_cap: 2,
    });
    await series(t, c, [40, 39, 38, 37, { price: 36, hours: 24 }, 35, 34]);
    assert.deepEqual(hoursOf(await fired(t, c.headers)), [0, 1, 24, 25]);
  });

  it('the first observation of a series can fire a threshold rule, never a change rule', async () => {
    const c = await catalogue(t);
    const below = await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 } });
    const drop = await createRule(t, c.headers, { condition: { type: 'price_drop', percent: 1 } });
    await series(t, c, [40]);
    assert.deepEqual(
      (await fired(t, c.headers)).map((e) => [e.alert_id, e.previous, e.sequence]),
      [[below, null, null]],
    );
    await series(t, c, [30], {}, 1);
    assert.deepEqual(
      (await fired(t, c.headers, drop)).map((e) => [e.previous!.price, e.current!.price]),
      [[40, 30]],
    );
  });

  it('price_drop: exact percentages, and both percent and amount must hold when both are set', async () => {
    const c = await catalogue(t);
    const pct = await createRule(t, c.headers, {
      competitor_id: c.competitorId,
      condition: { type: 'price_drop', percent: 10 },
      rearm: 'every_change',
    });
    const both = await createRule(t, c.headers, {
      competitor_id: c.competitor2Id,
      condition: { type: 'price_drop', percent: 10, amount: 10 },
      rearm: 'every_change',
    });
    // 19.99 -> 17.991 is exactly 10 % (floating point says 9.99999...).
    await series(t, c, [19.99, 17.991, 17.99, 20, 17.5]);
    assert.deepEqual(pricesOf(await fired(t, c.headers, pct)), [17.991, 17.5]);
    await series(t, c, [100, 91, 80, 75, 60], { competitor_id: c.competitor2Id });
    // 91: 9 %, 80: 12 % and 11, 75: 6.25 %, 60: 20 % and 15.
    assert.deepEqual(pricesOf(await fired(t, c.headers, both)), [80, 60]);
    assert.match((await fired(t, c.headers, both))[0]!.message, /fell from 91\.00 EUR to 80\.00 EUR \(-12\.09%\)/);
  });

  it('price_rise by amount', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_rise', amount: 5 }, rearm: 'every_change' });
    await series(t, c, [40, 44, 50, 49, 55]);
    assert.deepEqual(pricesOf(await fired(t, c.headers)), [50, 55]);
  });

  it("undercut: a competitor below our position's own_price less the margin", async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { product_id: c.productId, condition: { type: 'undercut', margin_percent: 10 } });
    // Our price is base_price 50 until our own series has a price: limit 45.
    await series(t, c, [46, 44]);
    await ingestOk(t, c.headers, [{ product_id: c.productId, price: 40, currency: 'EUR', observed_at: at(2) }]);
    // Now our price is 40: limit 36. 44.5 clears, 35 fires again.
    await series(t, c, [44.5, 35], {}, 3);
    const events = await fired(t, c.headers);
    assert.deepEqual(pricesOf(events), [44, 35]);
    assert.match(
      events[1]!.message,
      /Shop A sells Kettle at 35\.00 EUR, under our price of 40\.00 EUR by more than 10%\./,
    );
  });

  it('not_cheapest: fires when the rank goes from 1 to more than 1', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { product_id: c.productId, condition: { type: 'not_cheapest' } });
    // Our price 50. A first rank of 2 is only remembered: the rule fires on a move from 1.
    await series(t, c, [45, 55, 46, 44, 60]);
    await series(t, c, [40], { competitor_id: c.competitor2Id }, 5);
    const events = await fired(t, c.headers);
    assert.deepEqual(pricesOf(events), [46, 40]);
    assert.deepEqual(
      events.map((e) => e.competitor_id),
      [c.competitorId, c.competitor2Id],
    );
  });

  it('lowest_in_days: the lowest price of the series in that many days', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'lowest_in_days', days: 2 }, rearm: 'every_change' });
    await series(t, c, [
      { price: 50, hours: 0 },
      { price: 48, hours: 24 },
      { price: 49, hours: 30 },
      { price: 47, hours: 40 },
      { price: 55, hours: 100 }, // nothing within 2 days before it: not judged
      { price: 54, hours: 110 },
    ]);
    assert.deepEqual(pricesOf(await fired(t, c.headers)), [48, 47, 54]);
  });

  it('back_in_stock and out_of_stock: stock as a state; unknown stock is not judged', async () => {
    const c = await catalogue(t);
    const back = await createRule(t, c.headers, { condition: { type: 'back_in_stock' } });
    const out = await createRule(t, c.headers, { condition: { type: 'out_of_stock' } });
    await series(t, c, [
      { price: 40, in_stock: false },
      { price: 40, in_stock: true },
      { price: 41, in_stock: true },
      { price: 41, in_stock: null },
      { price: 41, in_stock: false },
      { price: 41, in_stock: true },
    ]);
    assert.deepEqual(hoursOf(await fired(t, c.headers, back)), [1, 5]);
    assert.deepEqual(hoursOf(await fired(t, c.headers, out)), [0, 4]);
  });

  it('series "own" watches our own price only; the default watches competitors only', async () => {
    const c = await catalogue(t);
    const own = await createRule(t, c.headers, {
      product_id: c.productId,
      condition: { type: 'price_below', threshold: 45, series: 'own' },
    });
    const theirs = await createRule(t, c.headers, {
      product_id: c.productId,
      condition: { type: 'price_below', threshold: 45 },
    });
    await series(t, c, [40]);
    await ingestOk(t, c.headers, [{ product_id: c.productId, price: 41, currency: 'EUR', observed_at: at(1) }]);
    assert.deepEqual(
      (await fired(t, c.headers, own)).map((e) => [e.competitor_id, e.current!.price]),
      [[null, 41]],
    );
    assert.deepEqual(
      (await fired(t, c.headers, theirs)).map((e) => [e.competitor_id, e.current!.price]),
      [[c.competitorId, 40]],
    );
  });
});

describe('alert engine: what never fires', () => {
  it('late observations neither fire nor move the state', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, {
      competitor_id: c.competitorId,
      condition: { type: 'price_below', threshold: 45 },
    });
    await createRule(t, c.headers, {
      competitor_id: c.competitor2Id,
      condition: { type: 'price_below', threshold: 45 },
      confirmations: 2,
    });
    await series(t, c, [
      { price: 50, hours: 10 },
      { price: 40, hours: 5 },
      { price: 40, hours: 11 },
    ]);
    // Had the late 40 counted, the second rule would fire at hour 11 (two in a row).
    await series(
      t,
      c,
      [
        { price: 40, hours: 10 },
        { price: 40, hours: 5 },
        { price: 50, hours: 11 },
        { price: 40, hours: 12 },
      ],
      { competitor_id: c.competitor2Id },
    );
    const events = await fired(t, c.headers);
    assert.deepEqual(
      events.map((e) => [e.competitor_id, e.current!.price, e.previous!.price]),
      [[c.competitorId, 40, 50]],
    );
    assert.deepEqual(hoursOf(events), [11]);
  });

  it('a threshold in a currency without a rate: nothing fires and nothing fails; with the rate it fires', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45, currency: 'USD' } });
    await series(t, c, [40]);
    assert.deepEqual(await fired(t, c.headers), []);
    const rate = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/exchange-rates/USD/EUR',
      headers: c.headers,
      payload: { rate: 0.9 },
    });
    assert.ok(rate.statusCode < 300, rate.body);
    // 45 USD = 40.5 EUR.
    await series(t, c, [40.6, 40.4], {}, 1);
    assert.deepEqual(pricesOf(await fired(t, c.headers)), [40.4]);
  });

  it('a rolled-back atomic batch fires nothing and moves no state', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 } });
    const res = await ingest(t, c.headers, {
      atomic: true,
      observations: [
        { product_id: c.productId, competitor_id: c.competitorId, price: 40, currency: 'EUR', observed_at: at(0) },
        {
          product_id: 'prod_doesnotexist',
          competitor_id: c.competitorId,
          price: 40,
          currency: 'EUR',
          observed_at: at(0),
        },
      ],
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(await fired(t, c.headers), []);
    const states = await t.rt.db.query<{ n: number }>(
      'select count(*)::int as n from alert_states s join alerts a on a.id = s.alert_id where a.account_id = $1',
      [c.accountId],
    );
    assert.equal(states.rows[0]!.n, 0);
    await series(t, c, [40]);
    assert.equal((await fired(t, c.headers)).length, 1);
  });

  it('a 1000-item ingestion evaluates set-based, with exactly the firings expected and one state per subject', async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 } });
    for (let i = 0; i < 99; i++)
      await createRule(t, c.headers, {
        product_id: c.otherProductId,
        condition: { type: 'price_above', threshold: 1000 + i },
      });
    const observations = [];
    for (let h = 0; h < 500; h++) {
      for (const competitor_id of [c.competitorId, c.competitor2Id]) {
        observations.push({
          product_id: c.productId,
          competitor_id,
          price: h % 2 === 0 ? 40 : 50,
          currency: 'EUR',
          observed_at: at(h),
        });
      }
    }
    // How fast is bench:alerts' business (docs/BENCHMARKS.md), not a timed test's.
    const res = await ingestOk(t, c.headers, observations, true);
    assert.equal(res.created, 1000);
    // By default a batch over ALERT_INLINE_MAX (100) is queued and evaluated just after its commit.
    assert.equal((await t.rt.db.query<{ n: number }>('select count(*)::int as n from alert_backlog')).rows[0]!.n, 1);
    assert.equal(await drainAlertBacklog(t.rt.db), 1);
    const r = await t.rt.db.query<{ alerts: number; events: number; states: number }>(
      `select (select count(*)::int from alert_events where account_id = $1) as alerts,
              (select count(*)::int from events where account_id = $1 and type = 'alert.triggered') as events,
              (select count(*)::int from alert_states s join alerts a on a.id = s.alert_id where a.account_id = $1) as states`,
      [c.accountId],
    );
    // Every 40 after a 50 re-arms and fires: 250 per series.
    assert.deepEqual(r.rows[0], { alerts: 500, events: 500, states: 2 });
  });
});
