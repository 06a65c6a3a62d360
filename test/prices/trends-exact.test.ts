import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { rollupPrices } from '../../src/prices/rollup/index.js';
import { trendsQuery, type TrendsRow } from '../../src/prices/trends/sql.js';
import { account, competitor, insertObservations, type Obs } from './history-support.js';
import { setRate } from './trends-support.js';

/**
 * The trends statement's exact arithmetic (docs/prices/TRENDS.md, "Exact arithmetic"): on
 * random data (our series and competitors', gaps of hours and days, ties at one instant, late
 * arrivals, a currency switch, stock true/false/unknown, rolled-up rows), at several instants
 * `now` (range edges inside days, on a day boundary, on an observation), every column of the
 * statement equals the float computation it replaced (test/fixtures/trends-float.sql, the
 * statement of main 8ea2c85), but for the last digit of a rounded average or share where the
 * float sum's rounding crossed a half (counted, and rare).
 */

function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SEED = Number(process.env.TRENDS_SEED ?? 20261129);
const H = 3_600_000;
const D = 24 * H;
const START = Date.parse('2025-01-01T00:00:00Z');
/** 100 days: the 30- and 90-day ranges start inside the data at most instants below. */
const DAYS = 100;
const FLOAT = readFileSync(new URL('../fixtures/trends-float.sql', import.meta.url), 'utf8');

function series(rand: () => number, competitorId: string | null, switchesCurrency: boolean): Obs[] {
  const out: Obs[] = [];
  let price = 10 + Math.floor(rand() * 400) / 4;
  let stock: boolean | null = true;
  for (let h = 0; h < DAYS * 24; h++) {
    if (rand() < 0.9) continue; // a gap hour
    if (h % 24 === 0 && rand() < 0.1) {
      h += 24 * Math.floor(1 + rand() * 3) - 1; // gap days
      continue;
    }
    const n = 1 + Math.floor(rand() * 3);
    let last: string | undefined;
    for (let i = 0; i < n; i++) {
      if (rand() < 0.4) price = Math.max(0, price + (Math.floor(rand() * 81) - 40) / 4 + (rand() < 0.3 ? 0.0001 : 0));
      if (rand() < 0.1) stock = [true, false, null][Math.floor(rand() * 3)]!;
      const at =
        last !== undefined && rand() < 0.15 ? last : new Date(START + h * H + Math.floor(rand() * H)).toISOString();
      last = at;
      out.push({
        competitor: competitorId,
        price: price.toFixed(4),
        at,
        inStock: stock,
        currency: switchesCurrency && h > DAYS * 8 && h < DAYS * 12 ? 'USD' : 'EUR',
      });
    }
  }
  return out;
}

function shuffle<T>(rand: () => number, xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe(`trends with exact arithmetic (seed ${SEED})`, () => {
  const t = useTestApp();
  let accountId: string;
  let productId: string;
  const rand = prng(SEED);
  let all: Obs[] = [];

  /** The instants asked at: random ones, a UTC midnight, an observation's instant, past the data. */
  function instants(): Date[] {
    const out = [
      new Date(START + 70 * D),
      new Date(all[Math.floor(rand() * all.length)]!.at),
      new Date(START + (DAYS + 20) * D + 123),
    ];
    for (let i = 0; i < 2; i++) out.push(new Date(START + 20 * D + Math.floor(rand() * (DAYS - 15) * D)));
    return out;
  }

  /** The statement's rows at `now`, by series. */
  async function exact(now: Date): Promise<TrendsRow[]> {
    const q = trendsQuery(accountId, productId, { now });
    return (await t.rt.db.query<TrendsRow>(q.text, q.values)).rows;
  }

  async function float(now: Date): Promise<TrendsRow[]> {
    return (await t.rt.db.query<TrendsRow>(FLOAT, [accountId, productId, now.toISOString()])).rows;
  }

  /**
   * Equal column for column; a rounded average or share may differ by one in its last digit
   * (the float sum's error crossed a half). Returns how many did.
   */
  async function compare(label: string): Promise<number> {
    let lastDigit = 0;
    let compared = 0;
    for (const now of instants()) {
      const t0 = performance.now();
      const got = await exact(now);
      const t1 = performance.now();
      const want = await float(now);
      if (process.env.TRENDS_DEBUG)
        console.log('exact', (t1 - t0).toFixed(0), 'float', (performance.now() - t1).toFixed(0));
      assert.equal(got.length, want.length, label);
      for (let i = 0; i < got.length; i++) {
        const g = { ...got[i]! } as Record<string, unknown>;
        const w = { ...want[i]! } as Record<string, unknown>;
        for (const k of Object.keys(w)) {
          if (!/^(avg|oos)_/.test(k) || g[k] === w[k] || g[k] === null || w[k] === null) continue;
          const diff = Math.abs(Number(g[k]) - Number(w[k]));
          assert.ok(
            diff <= 0.0001 + 1e-12,
            `${label} at ${now.toISOString()}: ${k} ${String(g[k])} vs ${String(w[k])}`,
          );
          lastDigit++;
          g[k] = w[k];
        }
        assert.deepEqual(g, w, `${label} at ${now.toISOString()}, series ${String(w.series)}`);
        compared += Object.keys(w).filter((k) => /^(avg|oos)_/.test(k) && w[k] !== null).length;
      }
    }
    assert.ok(compared > 60, `${label}: only ${compared} averages and shares compared`);
    assert.ok(lastDigit * 50 < compared, `${label}: ${lastDigit} of ${compared} differ in the last digit`);
    if (process.env.TRENDS_DEBUG) console.log(label, lastDigit, 'of', compared, 'rows', all.length);
    return lastDigit;
  }

  before(async () => {
    let headers;
    ({ headers, accountId, productId } = await account(t));
    const comps = [
      await competitor(t, headers, 'A'),
      await competitor(t, headers, 'B'),
      await competitor(t, headers, 'C'),
    ];
    await setRate(t, accountId, 'USD', 'EUR', '0.9');
    all = [
      ...series(rand, null, false),
      ...series(rand, comps[0]!, true),
      ...series(rand, comps[1]!, false),
      ...series(rand, comps[2]!, false),
    ];
    // In random order, a statement per 300 rows: most arrive late, before their series' latest.
    const shuffled = shuffle(rand, all);
    for (let i = 0; i < shuffled.length; i += 300) {
      await insertObservations(t, accountId, productId, shuffled.slice(i, i + 300));
    }
  });

  it('answers as the float computation did, after ingestion with late data', async () => {
    await compare('after ingestion');
  });

  it('answers as the float computation did over rolled-up rows (mean prices of many samples)', async () => {
    const r = await rollupPrices(t.rt.db, { olderThanDays: 0, now: START + 60 * D });
    assert.ok(r.deleted > 0, JSON.stringify(r));
    await compare('after the roll-up');
  });
});
