import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type LowRow, seriesLows, type SharedLows } from '../../src/alerts/engine/lows.js';
import { DAY_MS } from '../../src/time.js';
import { ExchangeRates } from '../../src/money/convert.js';
import { compareDecimals } from '../../src/money/decimal.js';
import { prng } from '../helpers/prng.js';

/**
 * seriesLows (src/alerts/engine/lows.ts) against the definition read literally: for each
 * observation that is not late, the lowest converted price among the rows recorded before it
 * (smaller id) observed within `days` days before it, on random series with late arrivals,
 * same-instant observations, two currencies and large amounts.
 */

const rates = new ExchangeRates([
  { base: 'EUR', quote: 'USD', rate: '1.0837' },
  { base: 'EUR', quote: 'JPY', rate: '161.2345' },
  { base: 'USD', quote: 'JPY', rate: '148.7321' },
]);

function brute(rows: readonly LowRow[], o: LowRow, days: number, currency: string): string | null {
  let low: string | null = null;
  for (const x of rows) {
    if (x.id >= o.id || x.at < o.at - days * DAY_MS || x.at > o.at) continue;
    const v = rates.convert(x.price, x.currency, currency);
    if (v !== null && (low === null || compareDecimals(v, low) < 0)) low = v;
  }
  return low;
}

/** A series as live ingestion would store it: batches in arrival order, each sorted by time; some batches late. */
function randomSeries(seed: number, n: number, big = false): LowRow[] {
  const rand = prng(seed);
  const rows: LowRow[] = [];
  let id = 1;
  let clock = Date.UTC(2025, 0, 1);
  while (rows.length < n) {
    const size = 1 + Math.floor(rand() * 6);
    // One batch in ten reaches back in time (arrives late); the rest continue from the clock.
    const start = rand() < 0.1 ? clock - Math.floor(rand() * 20) * DAY_MS : clock;
    const batch: Omit<LowRow, 'id'>[] = [];
    for (let k = 0; k < size; k++) {
      const at = start + Math.floor(rand() * 3) * 6 * 3_600_000 * (k + 1);
      const amount = big ? 90_000_000_000 + Math.floor(rand() * 9_999_999_999) : 20 + Math.floor(rand() * 6000) / 100;
      // Near the largest amounts, yen: converted counts of 10^-4 units above 2^53 (exact as ranks, not numbers).
      const r = rand();
      batch.push({ at, price: amount.toFixed(4), currency: r < 0.15 ? 'USD' : big && r < 0.3 ? 'JPY' : 'EUR' });
    }
    batch.sort((a, b) => a.at - b.at);
    for (const b of batch) rows.push({ id: id++, ...b });
    clock = Math.max(clock, ...batch.map((b) => b.at)) + 3_600_000;
  }
  return rows;
}

/** Whether `o` is late: a row recorded before it is newer. */
const late = (rows: readonly LowRow[], o: LowRow) =>
  rows.some((x) => x.id < o.id && (x.at > o.at || (x.at === o.at && x.id > o.id)));

describe('lowest_in_days: seriesLows', () => {
  for (const [seed, n, big] of [
    [1, 400, false],
    [2, 400, false],
    [3, 300, true],
  ] as const) {
    it(`agrees with the definition on a random series (seed ${seed}${big ? ', amounts near the largest' : ''})`, async () => {
      const rows = randomSeries(seed, n, big);
      const windows = [1, 7, 30, 365];
      const targets = rows.filter((o) => !late(rows, o)).map((o) => ({ id: o.id, at: o.at, currency: o.currency }));
      assert.ok(targets.length < rows.length, 'some observations arrive late');
      const got = await seriesLows([...rows].reverse(), targets, windows, rates);
      let compared = 0;
      for (const t of targets) {
        const o = rows.find((r) => r.id === t.id)!;
        for (const d of windows) {
          const want = brute(rows, o, d, o.currency);
          const have = got.get(o.id)!.get(d)!;
          assert.equal(have === null ? null : have, want, `observation ${o.id}, ${d} days`);
          compared++;
        }
      }
      assert.ok(compared > 1000);
    });
  }

  it('adds the part of each window the rows leave out (what the database computed)', async () => {
    const rows = randomSeries(7, 300);
    const targets = rows.slice(200).filter((o) => !late(rows, o));
    const t1 = Math.min(...targets.map((o) => o.at));
    const tk = Math.max(...targets.map((o) => o.at));
    const firstId = Math.min(...targets.map((o) => o.id));
    const days = 30;
    // The shared part [tk - days, t1) of rows recorded before the first target, as one minimum.
    const inShared = (x: LowRow) => x.at >= tk - days * DAY_MS && x.at < t1 && x.id < firstId;
    const shared: SharedLows = new Map(
      ['EUR', 'USD'].map((c) => {
        let low: string | null = null;
        for (const x of rows.filter(inShared)) {
          const v = rates.convert(x.price, x.currency, c);
          if (v !== null && (low === null || compareDecimals(v, low) < 0)) low = v;
        }
        return [c, new Map([[days, low]])];
      }),
    );
    const got = await seriesLows(
      rows.filter((x) => !inShared(x)),
      targets.map((o) => ({ id: o.id, at: o.at, currency: o.currency })),
      [days],
      rates,
      shared,
    );
    for (const o of targets)
      assert.equal(got.get(o.id)!.get(days), brute(rows, o, days, o.currency), `observation ${o.id}`);
  });

  it('leaves out prices no rate converts, and answers null for an empty window', async () => {
    const rows: LowRow[] = [
      { id: 1, at: 0, price: '10.0000', currency: 'GBP' },
      { id: 2, at: DAY_MS, price: '30.0000', currency: 'EUR' },
      { id: 3, at: 40 * DAY_MS, price: '20.0000', currency: 'EUR' },
    ];
    const got = await seriesLows(
      rows,
      rows.slice(1).map((r) => ({ id: r.id, at: r.at, currency: r.currency })),
      [7, 60],
      rates,
    );
    assert.deepEqual(
      [...got.get(2)!],
      [
        [7, null],
        [60, null],
      ],
    );
    assert.deepEqual(
      [...got.get(3)!],
      [
        [7, null],
        [60, '30.0000'],
      ],
    );
  });
});
