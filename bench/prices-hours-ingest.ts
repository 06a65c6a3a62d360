// `node --import tsx bench/prices-hours-ingest.ts`: uses the schema 'cost' of ph_rollups (or BENCH_HOURS_PG_URL), dropped and recreated.
// Ratio of a 1000-row insert (the statement POST /prices runs, all triggers on) with the
// hourly-aggregate trigger to without it, interleaved rounds, same data shape. TRIGGER names
// another trigger to compare with and without (price_observations_track_hours_spans, the
// recomputation of price_days' trends columns of migration 0018, was one until 0019 merged it
// into price_observations_track_hours: bench/prices-ingest-raw.ts compares before and after).
import os from 'node:os';
import pg from 'pg';
import { openPostgres } from '../src/db/postgres.js';
import { migrate } from '../src/db/migrate.js';
import { insertObservations } from '../src/prices/ingest/sql.js';
const base = process.env.BENCH_HOURS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/ph_rollups';
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query('drop schema if exists cost cascade; create schema cost');
await admin.end();
const db = await openPostgres(base + '?options=-c%20search_path%3Dcost');
await migrate(db);
await db.query(`insert into accounts (id, name) values ('acc_1', 'x')`);
const products = Array.from({ length: 100 }, (_, i) => `prod_${i}`);
for (const p of products)
  await db.query(
    `insert into products (id, account_id, name, base_price, currency) values ($1, 'acc_1', 'k', 1, 'EUR')`,
    [p],
  );
let clock = Date.parse('2026-06-01T00:00:00Z');
function batch() {
  // 1000 rows: 100 series x 10 observations each, 6 minutes apart (so ~1-2 hours per series touched).
  const rows = [];
  for (let i = 0; i < 10; i++) {
    for (const p of products)
      rows.push({
        product_id: p,
        competitor_id: null,
        listing_id: null,
        price: (10 + Math.random() * 5).toFixed(2),
        currency: 'EUR',
        in_stock: true,
        observed_at: new Date(clock + i * 360_000).toISOString(),
      });
  }
  clock += 10 * 360_000;
  return rows;
}
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const TRIGGER = process.env.TRIGGER ?? 'price_observations_track_hours';
const times: Record<string, number[]> = { with: [], without: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 ? ['with', 'without'] : ['without', 'with']) {
    await db.query(`alter table price_observations ${mode === 'with' ? 'enable' : 'disable'} trigger ${TRIGGER}`);
    const rows = batch();
    const t = performance.now();
    await db.transaction((tx) => insertObservations(tx, 'acc_1', rows));
    times[mode]!.push(performance.now() - t);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  JSON.stringify({
    load1: os.loadavg()[0],
    trigger: TRIGGER,
    rounds: ROUNDS,
    medianMsWith: med(times.with!),
    medianMsWithout: med(times.without!),
    ratioRowsPerSecond: med(times.without!) / med(times.with!),
  }),
);
process.exit(0);
