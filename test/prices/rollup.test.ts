import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { rollupCutoff, rollupPrices } from '../../src/prices/rollup/index.js';
import { account, competitor, history, insertObservations, type Headers, type Obs } from './history-support.js';
import { lcg as prng } from '../helpers/prng.js';

/** 0 to 6 observations an hour at random minutes, prices with 4 decimals and ties, shuffled. */
function series(
  rand: () => number,
  competitorId: string | null,
  fromIso: string,
  hours: number,
  currencyAt?: (h: number) => string,
): Obs[] {
  const out: Obs[] = [];
  const start = Date.parse(fromIso);
  for (let h = 0; h < hours; h++) {
    const n = Math.floor(rand() * 7);
    for (let i = 0; i < n; i++) {
      const at = new Date(start + h * 3_600_000 + Math.floor(rand() * 3_600_000)).toISOString();
      out.push({
        competitor: competitorId,
        price: (10 + Math.floor(rand() * 40) / 4 + (rand() < 0.3 ? 0.0001 : 0)).toFixed(4),
        at,
        currency: currencyAt?.(h) ?? 'EUR',
      });
    }
  }
  return out.sort(() => rand() - 0.5);
}

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'America/Sao_Paulo'];
const QUERIES = [
  ...ZONES.map((tz) => `from=2025-03-06T00:00:00Z&to=2025-03-12T00:00:00Z&tz=${tz}`),
  ...ZONES.map((tz) => `from=2025-03-27T00:00:00Z&to=2025-04-02T00:00:00Z&tz=${tz}`),
  'from=2025-03-08T00:00:00Z&to=2025-03-11T00:00:00Z&interval=hour&tz=America/New_York',
  'from=2025-03-29T00:00:00Z&to=2025-04-01T00:00:00Z&interval=hour&tz=Europe/Berlin',
  'from=2025-03-01T00:00:00Z&to=2025-04-05T00:00:00Z&interval=week&tz=Europe/Berlin',
  'from=2025-03-01T00:00:00Z&to=2025-04-05T00:00:00Z&interval=month&tz=America/New_York',
];

describe('price history: retention roll-up', () => {
  const t = useTestApp();
  let headers: Headers;
  let accountId: string;
  let productId: string;
  let comp: string;

  const count = async () =>
    Number(
      (
        await t.rt.db.query<{ n: string }>('select count(*) as n from price_observations where product_id = $1', [
          productId,
        ])
      ).rows[0]!.n,
    );
  const answers = async () => Promise.all(QUERIES.map(async (q) => (await history(t, headers, productId, q)).series));

  before(async () => {
    ({ headers, accountId, productId } = await account(t));
    comp = await competitor(t, headers);
    const rand = prng(20250330);
    await insertObservations(t, accountId, productId, [
      ...series(rand, null, '2025-03-06T00:00:00Z', 6 * 24),
      ...series(rand, comp, '2025-03-06T00:00:00Z', 6 * 24, (h) => (h % 50 < 40 ? 'EUR' : 'USD')),
      ...series(rand, null, '2025-03-27T00:00:00Z', 6 * 24),
      ...series(rand, comp, '2025-03-27T00:00:00Z', 6 * 24),
    ]);
  });

  it('keeps hour, day, week and month answers identical in whole-hour zones (DST days included), removing most rows', async () => {
    const before = await answers();
    const rowsBefore = await count();
    const r = await rollupPrices(t.rt.db, { olderThanDays: 1 });
    assert.equal(r.next, null);
    assert.ok(r.deleted > 0 && r.updated > 0, JSON.stringify(r));
    const rowsAfter = await count();
    assert.equal(rowsBefore - rowsAfter, r.deleted);
    assert.ok(rowsAfter < rowsBefore * 0.9, `${rowsBefore} -> ${rowsAfter}`);
    const after = await answers();
    for (let i = 0; i < QUERIES.length; i++) assert.deepEqual(after[i], before[i], QUERIES[i]);

    const maxPerHour = await t.rt.db.query<{ n: string }>(
      `select max(n) as n from (select count(*) as n from price_observations where product_id = $1
        group by competitor_id, currency, date_trunc('hour', observed_at, 'UTC')) x`,
      [productId],
    );
    assert.ok(Number(maxPerHour.rows[0]!.n) <= 4);
  });

  it('changes nothing when run again, and folds a late arrival into a rolled-up hour exactly', async () => {
    const again = await rollupPrices(t.rt.db, { olderThanDays: 1 });
    assert.equal(again.deleted, 0);
    assert.equal(again.updated, 0);

    // Three late observations in a rolled-up hour: one new open, one in the middle, one new max.
    await insertObservations(t, accountId, productId, [
      { price: '11.1111', at: '2025-03-09T06:00:00.000Z' },
      { price: '12.5', at: '2025-03-09T06:30:00.000Z' },
      { price: '99.9999', at: '2025-03-09T06:45:00.000Z' },
    ]);
    const before = await answers();
    const r = await rollupPrices(t.rt.db, { olderThanDays: 1 });
    assert.ok(r.deleted >= 1);
    assert.deepEqual(await answers(), before);
  });

  it('works in bounded steps: `next` continues where a step stopped', async () => {
    const { headers: h2, accountId: a2, productId: p2 } = await account(t);
    const comps = [await competitor(t, h2, 'A'), await competitor(t, h2, 'B')];
    const rand = prng(7);
    await insertObservations(
      t,
      a2,
      p2,
      [null, ...comps].flatMap((c) => series(rand, c, '2025-05-01T00:00:00Z', 48)),
    );
    const q = 'from=2025-05-01T00:00:00Z&to=2025-05-03T00:00:00Z&tz=Europe/Berlin';
    const before = (await history(t, h2, p2, q)).series;
    let after = undefined;
    let steps = 0;
    do {
      const r = await rollupPrices(t.rt.db, { olderThanDays: 1, after, budgetMs: 0 });
      after = r.next ?? undefined;
      steps++;
    } while (after);
    assert.ok(steps >= 3, `${steps} steps`);
    assert.deepEqual((await history(t, h2, p2, q)).series, before);
  });

  it('leaves observations newer than the cutoff alone', async () => {
    const { accountId: a2, productId: p2 } = await account(t);
    const recent = new Date(rollupCutoff(1).getTime() + 3_600_000);
    const rows = [0, 1, 2, 3, 4, 5].map((i) => ({
      price: `${i + 1}`,
      at: new Date(recent.getTime() + i * 60_000).toISOString(),
    }));
    await insertObservations(t, a2, p2, rows);
    await rollupPrices(t.rt.db, { olderThanDays: 1 });
    const n = await t.rt.db.query<{ n: string }>('select count(*) as n from price_observations where product_id = $1', [
      p2,
    ]);
    assert.equal(Number(n.rows[0]!.n), 6);
  });
});
