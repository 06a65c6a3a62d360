import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { drainAlertBacklog, startAlertBacklog } from '../../src/alerts/engine/backlog.js';
import { useTestApp } from '../helpers/app.js';
import { ingestOk } from '../prices/ingest-support.js';
import { at, catalogue, createRule, fired } from './engine-support.js';
import type { AlertEvent } from '../helpers/api-types.js';

/**
 * Large batches (docs/alerts/firing.md, "Large batches"): with ALERT_INLINE_MAX=100, more than
 * 100 observations are queued in alert_backlog by the transaction that inserts them and
 * evaluated after their commit by the worker's `alert-backlog` task, with the same firings as
 * inline evaluation. (By default every batch is evaluated in its transaction: engine.test.ts.)
 */

const t = useTestApp({ ALERT_INLINE_MAX: '100' });

type Cat = Awaited<ReturnType<typeof catalogue>>;

/** Two series over `hours` hours alternating around the thresholds, with a stock-out now and then. */
function observations(c: Cat, hours: number, from = 0) {
  const out = [];
  for (let h = from; h < from + hours; h++) {
    for (const competitor_id of [c.competitorId, c.competitor2Id]) {
      const price = [50, 44, 43, 47, 44, 60, 39][(h + (competitor_id === c.competitorId ? 0 : 3)) % 7]!;
      out.push({
        product_id: c.productId,
        competitor_id,
        price,
        in_stock: h % 9 !== 4,
        currency: 'EUR',
        observed_at: at(h),
      });
    }
  }
  return out;
}

async function rules(c: Cat): Promise<void> {
  await createRule(t, c.headers, { condition: { type: 'price_below', threshold: 45 }, hysteresis_percent: 5 });
  await createRule(t, c.headers, { condition: { type: 'price_drop', percent: 5 }, rearm: 'every_change' });
  await createRule(t, c.headers, { condition: { type: 'back_in_stock' } });
  await createRule(t, c.headers, { condition: { type: 'lowest_in_days', days: 2 }, rearm: 'every_change' });
  await createRule(t, c.headers, { product_id: c.productId, condition: { type: 'undercut', margin_amount: 1 } });
}

/** What fired, in a form two accounts can compare: rule by its place, series by its place, price and time. */
async function firings(c: Cat): Promise<string[]> {
  const r = await t.rt.db.query<{
    rule: number;
    competitor: number;
    condition_type: string;
    price: string;
    observed_at: string;
  }>(
    `select (select count(*)::int from alerts a2 where a2.account_id = e.account_id and (a2.created_at, a2.id) < (a.created_at, a.id)) as rule,
            case when e.competitor_id = $2 then 1 else 2 end as competitor, e.condition_type,
            e.current->>'price' as price, e.current->>'observed_at' as observed_at
       from alert_events e join alerts a on a.id = e.alert_id
      where e.account_id = $1
      order by e.current->>'observed_at', rule, competitor`,
    [c.accountId, c.competitorId],
  );
  return r.rows.map((x) => `${x.rule} ${x.competitor} ${x.condition_type} ${x.price} ${x.observed_at}`);
}

const queued = async (accountId: string) =>
  (
    await t.rt.db.query<{ n: number }>('select count(*)::int as n from alert_backlog where account_id = $1', [
      accountId,
    ])
  ).rows[0]!.n;

describe('alert backlog: large batches evaluated after their commit', () => {
  it('queues a 1000-item batch and the small ones behind it, then fires exactly what inline evaluation fires', async () => {
    const inline = await catalogue(t);
    const bulk = await catalogue(t);
    await rules(inline);
    await rules(bulk);
    const first = observations(inline, 500);
    const next = observations(inline, 1, 500);
    // Inline: batches of 100, under the threshold, evaluated in their own transaction.
    for (let i = 0; i < first.length; i += 100) await ingestOk(t, inline.headers, first.slice(i, i + 100));
    await ingestOk(t, inline.headers, next);
    assert.equal(await queued(inline.accountId), 0, 'batches of 100 are evaluated inline');
    const expected = await firings(inline);
    assert.ok(expected.length > 100, `a sequence that fires enough to compare: ${expected.length}`);

    const mine = (o: ReturnType<typeof observations>) =>
      o.map((x) => ({
        ...x,
        product_id: bulk.productId,
        competitor_id: x.competitor_id === inline.competitorId ? bulk.competitorId : bulk.competitor2Id,
      }));
    assert.equal((await ingestOk(t, bulk.headers, mine(first))).created, 1000);
    // The next small batch queues behind the waiting one: an account's batches go in order.
    await ingestOk(t, bulk.headers, mine(next));
    assert.equal(await queued(bulk.accountId), 2);
    assert.deepEqual(await fired(t, bulk.headers), [], 'nothing fired before the backlog is evaluated');

    assert.ok((await drainAlertBacklog(t.rt.db)) >= 2);
    assert.equal(await queued(bulk.accountId), 0);
    assert.deepEqual(await firings(bulk), expected);
    const events = await t.rt.db.query<{ n: number }>(
      `select count(*)::int as n from events where account_id = $1 and type = 'alert.triggered'`,
      [bulk.accountId],
    );
    assert.equal(events.rows[0]!.n, expected.length, 'one alert.triggered event per firing');
    // A later small batch, with nothing waiting, is evaluated inline again.
    await ingestOk(t, bulk.headers, mine(observations(inline, 1, 501)));
    assert.equal(await queued(bulk.accountId), 0);
  });

  it('an account without rules queues nothing', async () => {
    const c = await catalogue(t);
    await ingestOk(t, c.headers, observations(c, 300));
    assert.equal(await queued(c.accountId), 0);
  });

  it("the worker's alert-backlog task evaluates a queued batch when its NOTIFY comes", async () => {
    const c = await catalogue(t);
    await createRule(t, c.headers, {
      competitor_id: c.competitorId,
      condition: { type: 'price_below', threshold: 45 },
      rearm: 'every_change',
    });
    const task = await startAlertBacklog(t.rt.db, pino({ level: 'silent' }));
    try {
      const obs = observations(c, 100);
      await ingestOk(t, c.headers, obs);
      const want = obs.filter((o) => o.competitor_id === c.competitorId && o.price < 45).length;
      let got: AlertEvent[] = [];
      const deadline = Date.now() + 20_000;
      while ((got = await fired(t, c.headers)).length < want && Date.now() < deadline)
        await new Promise((r) => setImmediate(r));
      assert.equal(got.length, want);
      assert.equal(await queued(c.accountId), 0);
    } finally {
      await task.stop();
    }
  });
});
