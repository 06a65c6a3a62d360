import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { drainAlertBacklog } from '../../src/alerts/engine/backlog.js';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { useTestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/database.js';
import { prng } from '../helpers/prng.js';
import type { Headers } from '../products/support.js';
import { at, catalogue, createRule } from './engine-support.js';
import type { AlertEvent } from '../helpers/api-types.js';

/**
 * The order live evaluation sees a series in, and preview replaying it (issue 22): observations
 * of a series take turns under its lock, and a batch's ids follow that order
 * (src/prices/series-lock.ts). On PostgreSQL two runtimes with their own pools stand for two
 * API processes writing at the same moment.
 */

const t = useTestApp();
/** A second API process's app on the same database (PostgreSQL); the embedded engine has one owner, so there it is the same app. */
let second: { app: App; rt: Runtime } | null = null;
async function apps(): Promise<[App, App]> {
  if (usingPostgres() && !second) {
    const rt = await createRuntime(
      loadConfig({ AUTH_FAILURE_LIMIT: '100000', ...t.storage.env }),
      pino({ level: 'silent' }),
    );
    second = { rt, app: await buildApp(rt) };
  }
  return [t.app, second?.app ?? t.app];
}
after(async () => {
  await second?.app.close();
  await second?.rt.close();
});

async function post(app: App, headers: Headers, observations: object[]) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/prices', headers, payload: { observations } });
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  assert.equal(res.json<{ failed: number }>().failed, 0);
}

/** Every alert event of a rule, oldest first, through the paginated list. */
async function eventsOf(headers: Headers, alertId: string): Promise<AlertEvent[]> {
  const out: AlertEvent[] = [];
  let cursor = '';
  for (;;) {
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/alert-events?alert_id=${alertId}&limit=100${cursor}`,
      headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<{ data: AlertEvent[]; pagination: { has_more: boolean; next_cursor: string | null } }>();
    out.push(...page.data);
    if (!page.pagination.has_more) break;
    cursor = `&cursor=${encodeURIComponent(page.pagination.next_cursor!)}`;
  }
  return out;
}

async function previewOf(headers: Headers, body: object, from: string, to: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/alerts/preview',
    headers,
    payload: { name: 'p', ...body, from, to },
  });
  assert.equal(res.statusCode, 200, res.body.slice(0, 500));
  const got = res.json<{ data: AlertEvent[]; count: number; complete: boolean }>();
  assert.equal(got.complete, true);
  return got.data;
}

/** What live and preview both decide, one line per event, in one order (time, then series). */
const decided = (events: AlertEvent[]) =>
  events
    .map((e) =>
      JSON.stringify([
        e.current?.observed_at,
        e.competitor_id,
        e.condition_type,
        e.current,
        e.previous,
        e.message,
        e.sequence,
      ]),
    )
    .sort();

const RULES = [
  { condition: { type: 'lowest_in_days', days: 2 }, rearm: 'every_change' },
  { condition: { type: 'lowest_in_days', days: 30 }, rearm: 'every_change' },
  { condition: { type: 'price_drop', percent: 4 }, rearm: 'every_change' },
  { condition: { type: 'price_below', threshold: 44 }, hysteresis_percent: 2, daily_cap: 2 },
  { condition: { type: 'back_in_stock' } },
];

async function compare(headers: Headers, ids: string[], to: number) {
  let compared = 0;
  for (const [i, body] of RULES.entries()) {
    const live = await eventsOf(headers, ids[i]!);
    const replayed = await previewOf(headers, body, at(-24 * 60), at(to));
    const [want, got] = [decided(live), decided(replayed)];
    const first = want.findIndex((line, k) => line !== got[k]);
    assert.ok(
      first === -1 && want.length === got.length,
      `${JSON.stringify(body)}: ${want.length} live, ${got.length} replayed; first difference: live ${want[first]} replayed ${got[first]}`,
    );
    compared += live.length;
  }
  return compared;
}

describe('series order: live evaluation and its replay', () => {
  it('preview fires what live fired over random batches: late ones, batches evaluated after their commit, in slices', async () => {
    const c = await catalogue(t);
    const ids: string[] = [];
    for (const body of RULES) ids.push(await createRule(t, c.headers, body));
    const rand = prng(22);
    let hour = 0;
    for (let b = 0; b < 14; b++) {
      // Mostly small batches (evaluated in their transaction); some over ALERT_INLINE_MAX (100,
      // queued) and over a read slice (250); one in four reaches back in time (arrives late).
      const size = b % 5 === 2 ? 260 + Math.floor(rand() * 60) : b % 5 === 4 ? 120 : 1 + Math.floor(rand() * 12);
      const start = b % 4 === 3 ? hour - 1 - Math.floor(rand() * 40) : hour;
      const observations = [];
      for (let k = 0; k < size; k++) {
        for (const competitor_id of [c.competitorId, c.competitor2Id]) {
          const price = Math.round((40 + rand() * 15) * 100) / 100;
          observations.push({
            product_id: c.productId,
            competitor_id,
            price,
            currency: 'EUR',
            in_stock: rand() > 0.1,
            observed_at: at(start + k),
          });
        }
      }
      // Items in any order: the batch is recorded in time order.
      observations.sort(() => rand() - 0.5);
      await post(t.app, c.headers, observations);
      await drainAlertBacklog(t.rt.db);
      hour = Math.max(hour, start + size);
    }
    const compared = await compare(c.headers, ids, hour + 1);
    assert.ok(compared > 100, `enough firings to compare: ${compared}`);
  });

  it('preview fires what live fired when two processes write one series at the same moment', async () => {
    const c = await catalogue(t);
    const ids: string[] = [];
    for (const body of RULES) ids.push(await createRule(t, c.headers, body));
    const rand = prng(2222);
    const [a, b] = await apps();
    for (let round = 0; round < 25; round++) {
      // Two writers, interleaved hours, so whichever takes the series second may hold older observations.
      const base = round * 10;
      const one = [0, 2, 4].map((k) => ({
        product_id: c.productId,
        competitor_id: c.competitorId,
        price: Math.round((40 + rand() * 15) * 100) / 100,
        currency: 'EUR',
        in_stock: rand() > 0.1,
        observed_at: at(base + k),
      }));
      const two = [1, 3, 5].map((k) => ({
        product_id: c.productId,
        competitor_id: c.competitorId,
        price: Math.round((40 + rand() * 15) * 100) / 100,
        currency: 'EUR',
        in_stock: rand() > 0.1,
        observed_at: at(base + k),
      }));
      await Promise.all([post(a, c.headers, one), post(b, c.headers, two)]);
    }
    const compared = await compare(c.headers, ids, 260);
    assert.ok(compared > 20, `enough firings to compare: ${compared}`);
  });

  it('not_cheapest fires once per transition when two competitors undercut at the same moment; a cap of 1 a day holds', async () => {
    const c = await catalogue(t);
    const own = { product_id: c.productId, competitor_id: null, price: 50, currency: 'EUR', observed_at: at(0) };
    await post(t.app, c.headers, [own]);
    const rule = await createRule(t, c.headers, {
      product_id: c.productId,
      condition: { type: 'not_cheapest' },
      daily_cap: 1,
    });
    const capped = await createRule(t, c.headers, {
      product_id: c.productId,
      condition: { type: 'not_cheapest' },
      rearm: 'every_change',
      daily_cap: 1,
    });
    const [a, b] = await apps();
    const DAYS = 20;
    for (let day = 0; day < DAYS; day++) {
      const h = 24 * day + 1;
      // Both dearer than us: cheapest again (re-arms), then both below us at once, from two processes.
      await post(
        t.app,
        c.headers,
        [c.competitorId, c.competitor2Id].map((competitor_id) => ({
          product_id: c.productId,
          competitor_id,
          price: 60,
          currency: 'EUR',
          observed_at: at(h),
        })),
      );
      await Promise.all([
        post(a, c.headers, [
          {
            product_id: c.productId,
            competitor_id: c.competitorId,
            price: 45,
            currency: 'EUR',
            observed_at: at(h + 1),
          },
        ]),
        post(b, c.headers, [
          {
            product_id: c.productId,
            competitor_id: c.competitor2Id,
            price: 44,
            currency: 'EUR',
            observed_at: at(h + 1),
          },
        ]),
      ]);
      // Another undercut the same day: every_change would fire again, but its cap is 1 a day.
      await post(t.app, c.headers, [
        { product_id: c.productId, competitor_id: c.competitorId, price: 43, currency: 'EUR', observed_at: at(h + 2) },
      ]);
    }
    const once = await eventsOf(c.headers, rule);
    assert.equal(once.length, DAYS, 'one firing per transition');
    const days = new Map<string, number>();
    for (const e of await eventsOf(c.headers, capped))
      days.set(e.current!.observed_at.slice(0, 10), (days.get(e.current!.observed_at.slice(0, 10)) ?? 0) + 1);
    assert.equal(days.size, DAYS, 'the capped rule fired on every day');
    assert.ok(
      [...days.values()].every((n) => n === 1),
      `never more than 1 a day: ${JSON.stringify([...days])}`,
    );
  });
});
