// `node --import tsx bench/prices-ingest-raw.ts`: issue 26's ingestion target with every roll-up on.
// BENCH_DB=pg (default: the schema 'ingest_raw' of BENCH_INGEST_PG_URL or ph_rollups, dropped and
// recreated) or BENCH_DB=pglite (a temporary directory).
//
// Each round, one 1000-row batch (100 series x 10 observations 6 minutes apart, the next hour of
// every series) is written once per mode, each mode into its own 100 products (so each keeps
// consistent aggregates and fills its days alike), in rotating order:
// - api: the statement POST /prices runs (insertObservations, RETURNING), every trigger on;
// - old (MODES includes it): the same with the insert triggers before migration 0019 (0017's
//   merge of hours and days, then 0018's recomputation of every touched day's trends columns from
//   its raw rows) in place of the current one;
// - pre21 (MODES includes it): the same with the insert trigger before migration 0021 (0019's,
//   without the days' carries) in place of the current one;
// - pre22 (MODES includes it): the api statement without migration 0022's triggers on
//   price_days (the trends' blocks dropped with any change of their day rows);
// - pre24 (MODES includes it): the api statement without migration 0024's triggers on
//   price_hours (the local days of HISTORY_ZONES dropped with any change of their hours). The
//   batches are of June 2026, hours long past, so the triggers probe the local days each time;
//   START=now: from the current hour on, where they stop at their first query.
// - pre25 (MODES includes it): the api statement without migration 0025's triggers on
//   price_days (the month texts dropped with any change of their day rows).
// - raw: a multi-row INSERT of the same rows (as bench/prices.ts's raw side) into the table
//   without the roll-up triggers (price_hours, price_days, their trends columns); the series
//   trigger of migration 0003 stays, as before roll-ups.
// - bare (breakdown): the api statement without any roll-up trigger.
// Prints medians, p10/p90 and the ratios of rows/s to raw (the figure: api / raw >= 0.5).
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openPostgres } from '../src/db/postgres.js';
import { openPglite } from '../src/db/pglite.js';
import { migrate } from '../src/db/migrate.js';
import { insertObservations } from '../src/prices/ingest/sql.js';
import type { Database } from '../src/db/types.js';
import { cpuMs, pidsMatching } from './lib/proc.js';
import { rawInsert } from './lib/prices-data.js';

const KIND = process.env.BENCH_DB === 'pglite' ? 'pglite' : 'pg';
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const MODES = (process.env.MODES ?? 'api,raw').split(',');
const LATE = process.env.LATE === '1';

async function open(): Promise<{ db: Database; done: () => Promise<void> }> {
  if (KIND === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-ingest-raw-'));
    const db = await openPglite(dir);
    return { db, done: async () => (await db.close(), fs.rmSync(dir, { recursive: true, force: true })) };
  }
  const base = process.env.BENCH_INGEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/ph_rollups';
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query('drop schema if exists ingest_raw cascade; create schema ingest_raw');
  await admin.end();
  const db = await openPostgres(base + '?options=-c%20search_path%3Dingest_raw');
  return { db, done: () => db.close() };
}

const { db, done } = await open();
// CPU of the statement: on PostgreSQL its backends' (the database's, from /proc, 10 ms ticks) plus
// this process's; on PGlite this process's (the engine runs on one of its threads).
const pgDb =
  KIND === 'pg' ? new URL(process.env.BENCH_INGEST_PG_URL ?? 'postgres://x/ph_rollups').pathname.slice(1) : '';
const pgRe = new RegExp(`^postgres: (\\S+: )?\\S+ ${pgDb} `);
function cpuNow(): number {
  const self = process.cpuUsage();
  const backends = KIND === 'pg' ? pidsMatching(pgRe).reduce((n, p) => n + cpuMs(p), 0) : 0;
  return backends + (self.user + self.system) / 1000;
}
await migrate(db);
// BENCH_SQL: a file of statements run after the migrations (a variant of a trigger function to try).
if (process.env.BENCH_SQL) await db.query(fs.readFileSync(process.env.BENCH_SQL, 'utf8'));
// The insert triggers before migration 0019, to compare with (MODES=api,old,raw): 0017's
// price_hours_inserted (hours and days' own columns) and 0018's recomputation of the touched
// days' trends columns, copied from the migrations under other names.
function fnFrom(file: string, name: string, suffix = 'old'): string {
  const sql = fs.readFileSync(new URL(`../migrations/${file}`, import.meta.url), 'utf8');
  const start = sql.search(new RegExp(`create (or replace )?function ${name}\\(\\)`));
  const end = sql.indexOf('$$;', start);
  if (start < 0 || end < 0) throw new Error(`${name} not found in ${file}`);
  return sql.slice(start, end + 3).replace(`function ${name}()`, `function ${name}_${suffix}()`);
}
await db.query(fnFrom('0017_price_days.sql', 'price_hours_inserted'));
// MODES=api,pre21,raw: the insert trigger before migration 0021 (0019's, without the carries).
await db.query(fnFrom('0019_price_days_spans_merge.sql', 'price_hours_inserted', 'pre21'));
await db.query(fnFrom('0018_price_days_spans.sql', 'price_days_spans_inserted'));
for (const [trigger, fn] of [
  ['price_observations_track_hours_0017', 'price_hours_inserted_old'],
  ['price_observations_track_hours_spans_0018', 'price_days_spans_inserted_old'],
  ['price_observations_track_hours_0019', 'price_hours_inserted_pre21'],
]) {
  await db.query(`create trigger ${trigger} after insert on price_observations
                    referencing new table as new_rows for each statement execute function ${fn}()`);
  await db.query(`alter table price_observations disable trigger ${trigger}`);
}
await db.query(`insert into accounts (id, name) values ('acc_1', 'x')`);
const products: Record<string, string[]> = {};
for (const mode of MODES) {
  products[mode] = Array.from({ length: 100 }, (_, i) => `prod_${mode}_${i}`);
  for (const p of products[mode]!)
    await db.query(
      `insert into products (id, account_id, name, base_price, currency) values ($1, 'acc_1', 'k', 1, 'EUR')`,
      [p],
    );
}

const RAW = rawInsert(1000);

let clock =
  process.env.START === 'now' ? Math.floor(Date.now() / 3_600_000) * 3_600_000 : Date.parse('2026-06-01T00:00:00Z');
/** One hour of every series: 10 observations 6 minutes apart, prices and stock at random. */
function timeline() {
  const rows = [];
  for (let i = 0; i < 10; i++)
    for (let s = 0; s < 100; s++)
      rows.push({
        s,
        price: (10 + Math.random() * 5).toFixed(2),
        in_stock: Math.random() < 0.95,
        // LATE=1: each series' first row 3 minutes before the previous batch's last (every
        // series-day late: the recomputation path).
        observed_at: new Date(clock + i * 360_000 - (LATE && i === 0 ? 540_000 : 0)).toISOString(),
      });
  clock += 10 * 360_000;
  return rows;
}

async function setTriggers(mode: string) {
  const on = (t: string, yes: boolean) =>
    db.query(`alter table price_observations ${yes ? 'enable' : 'disable'} trigger ${t}`);
  await on(
    'price_observations_track_hours',
    mode === 'api' || mode === 'pre22' || mode === 'pre24' || mode === 'pre25',
  );
  await on('price_observations_track_hours_0017', mode === 'old');
  await on('price_observations_track_hours_spans_0018', mode === 'old');
  await on('price_observations_track_hours_0019', mode === 'pre21');
  for (const op of ['inserted', 'updated', 'deleted']) {
    await db.query(`alter table price_days ${mode === 'pre22' ? 'disable' : 'enable'} trigger price_days_blocks_${op}`);
    await db.query(
      `alter table price_hours ${mode === 'pre24' ? 'disable' : 'enable'} trigger price_hours_local_days_${op}`,
    );
    await db.query(`alter table price_days ${mode === 'pre25' ? 'disable' : 'enable'} trigger price_days_texts_${op}`);
  }
}

const times: Record<string, number[]> = Object.fromEntries(MODES.map((m) => [m, []]));
const cpu: Record<string, number> = Object.fromEntries(MODES.map((m) => [m, 0]));
const load1 = [os.loadavg()[0]!];
for (let r = 0; r < ROUNDS; r++) {
  const tl = timeline();
  const order = MODES.map((_, i) => MODES[(i + r) % MODES.length]!);
  if (r % 2) order.reverse();
  for (const mode of order) {
    await setTriggers(mode);
    const rows = tl.map((o) => ({
      product_id: products[mode]![o.s]!,
      competitor_id: null,
      listing_id: null,
      price: o.price,
      currency: 'EUR',
      in_stock: o.in_stock,
      observed_at: o.observed_at,
    }));
    const c0 = cpuNow();
    const t = performance.now();
    if (mode === 'raw') {
      const params: unknown[] = ['acc_1'];
      for (const o of rows) params.push(o.product_id, o.competitor_id, o.price, o.currency, o.in_stock, o.observed_at);
      await db.transaction(async (tx) => {
        const res = await tx.query(RAW, params);
        if (res.rowCount !== 1000) throw new Error(`raw insert wrote ${res.rowCount} rows`);
      });
    } else {
      await db.transaction((tx) => insertObservations(tx, 'acc_1', rows));
    }
    times[mode]!.push(performance.now() - t);
    cpu[mode]! += cpuNow() - c0;
  }
  load1.push(os.loadavg()[0]!);
}
const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const round1 = (x: number) => Math.round(x * 10) / 10;
const summary = Object.fromEntries(
  MODES.map((m) => [
    m,
    { p10: round1(q(times[m]!, 0.1)), median: round1(q(times[m]!, 0.5)), p90: round1(q(times[m]!, 0.9)) },
  ]),
);
// Per-round ratios (rows/s of a mode over raw's in the same round), for the spread.
const ratios = Object.fromEntries(
  MODES.filter((m) => m !== 'raw' && times.raw).map((m) => {
    const per = times[m]!.map((x, i) => times.raw![i]! / x);
    return [m, { median: q(times.raw!, 0.5) / q(times[m]!, 0.5), p10: q(per, 0.1), p90: q(per, 0.9) }];
  }),
);
// The current trigger against 0018's, round by round.
const perOld = times.old && times.api ? times.api.map((x, i) => times.old![i]! / x) : undefined;
console.log(
  JSON.stringify({
    db: KIND,
    late: LATE,
    rounds: ROUNDS,
    load1: [Math.min(...load1), Math.max(...load1)],
    ms: summary,
    cpuMsPerBatch: Object.fromEntries(MODES.map((m) => [m, round1(cpu[m]! / ROUNDS)])),
    rowsPerSecondVsRaw: ratios,
    ...(perOld && {
      apiVsOld: { median: q(times.old!, 0.5) / q(times.api!, 0.5), p10: q(perOld, 0.1), p90: q(perOld, 0.9) },
    }),
  }),
);
await done();
process.exit(0);
