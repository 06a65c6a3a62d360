/**
 * The prices benchmark's data set (issue 4): one account with PRODUCTS products x COMPETITORS
 * competitors, PER_SERIES observations per competitor series spread over DAYS days, our own
 * price series (one observation in OWN_EVERY), and INGEST_PRODUCTS more products with no history
 * that the ingestion measurement writes to. Generated inside the database (generate_series and a
 * hash of the series and the step), so both databases get the same data without shipping 10M
 * rows through the driver, and kept between runs: a marker with the seed parameters says the data
 * set is complete (PostgreSQL: the database's comment; embedded: DATA_DIR/bench-seed.json).
 *
 * Env: BENCH_PRICES_PRODUCTS (1000), BENCH_PRICES_COMPETITORS (10), BENCH_PRICES_PER_SERIES
 * (1000; BENCH_PRICES_PGLITE_PER_SERIES for the embedded database only), BENCH_PRICES_DAYS (365),
 * BENCH_PRICES_DIR (where the embedded DATA_DIR lives; default $TMPDIR/ph-bench-prices),
 * BENCH_PRICES_PG_DB (ph_bench_prices), BENCH_PRICES_SEED_JOBS (2: connections building the
 * day rows at once, PostgreSQL), BENCH_PRICES_HOURS=1 (build the hourly aggregates too),
 * BENCH_PRICES_RESUME=0 (seed from scratch even when a load was left for its roll-ups).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../../src/auth/keys.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { ensureObservationPartitions } from '../../src/prices/partitions/index.js';
import { OBSERVATION_INDEXES } from '../../src/prices/partitions/indexes.js';
import { inBatches } from './batches.js';
import { env } from './common.js';
import { sampleRss } from './proc.js';
import { pgUrl, recreatePgDatabase } from './seed.js';

export type Kind = 'pg' | 'pglite';

export const PRICES_PG_DB = process.env.BENCH_PRICES_PG_DB ?? 'ph_bench_prices';
export const PRICES_DIR = path.resolve(process.env.BENCH_PRICES_DIR ?? path.join(os.tmpdir(), 'ph-bench-prices'));
export const PGLITE_DATA_DIR = path.join(PRICES_DIR, 'pglite');
const MARKER_FILE = 'bench-seed.json';
/** The account's name, and the key name of the keys the benchmark creates for it. */
export const ACCOUNT_NAME = 'bench-prices';
/** Exchange rates the account sets (1 base = rate quote). CHF has none: left out of comparisons. */
const RATES: [string, string, number][] = [
  ['EUR', 'USD', 1.08],
  ['GBP', 'USD', 1.27],
  ['GBP', 'EUR', 1.17],
];

export interface SeedParams {
  /** Bumped whenever the generator changes, so old data sets are not reused. */
  version: number;
  products: number;
  competitors: number;
  perSeries: number;
  /** Our own series has one observation for every `ownEvery` steps of the competitors'. */
  ownEvery: number;
  ingestProducts: number;
  days: number;
}

export function seedParams(kind: Kind): SeedParams {
  const perSeries = env('BENCH_PRICES_PER_SERIES', 1000);
  return {
    // 2: price changes numbered per series (migration 0004's `sequence`, price_series.changes).
    // 3: the hourly aggregates (price_hours, migration 0015) built after the load.
    // 4: the daily aggregates (price_days, migration 0017) built from the hours.
    // 5: price_days' trends columns (migration 0018) built from the raw rows.
    // 6: the day rows built in one pass from the raw rows, trends columns and carries included;
    //    no hours unless BENCH_PRICES_HOURS=1.
    version: 6,
    products: env('BENCH_PRICES_PRODUCTS', 1000),
    competitors: Math.min(60, env('BENCH_PRICES_COMPETITORS', 10)),
    perSeries: kind === 'pglite' ? env('BENCH_PRICES_PGLITE_PER_SERIES', perSeries) : perSeries,
    ownEvery: 10,
    ingestProducts: env('BENCH_PRICES_INGEST_PRODUCTS', 400),
    days: env('BENCH_PRICES_DAYS', 365),
  };
}

/** What the load left (the `loaded` marker), for the roll-ups that follow it. */
export interface LoadedSeed {
  params: SeedParams;
  accountId: string;
  startAt: string;
  endAt: string;
  observations: number;
  series: number;
  priceChanges: number;
  seconds: Record<string, number>;
  rowsPerSecondLoad: number;
  load1: number[];
  seedRssPeakMiB: number;
  loadedAt: string;
}

export interface SeedInfo {
  params: SeedParams;
  kind: Kind;
  /** The observations span [startAt, endAt] (ISO). */
  startAt: string;
  endAt: string;
  observations: number;
  competitorObservations: number;
  ownObservations: number;
  priceChanges: number;
  series: number;
  /** Seconds per step and in all (wall clock). */
  seconds: Record<string, number>;
  rowsPerSecondLoad: number;
  sizeBytes: {
    database: number;
    /** price_observations with its indexes (pg_total_relation_size). */
    observations: number;
    /** Its heap alone, its indexes alone (pg_relation_size, pg_indexes_size). */
    observationsHeap?: number;
    observationsIndexes?: number;
    /** Mean pg_column_size of one observation row (the tuple's data, without its 24-byte header and line pointer). */
    observationRowMean?: number;
    /** price_changes and price_series with their indexes. */
    priceChanges?: number;
    priceSeries?: number;
    priceHours?: number;
    priceDays?: number;
    dataDirOnDisk?: number;
  };
  /** Peak RSS of the seeding process (embedded: includes the engine's WebAssembly memory). */
  seedRssPeakMiB: number;
  load1: number[];
  seededAt: string;
}

export const targetOf = (kind: Kind) =>
  kind === 'pg'
    ? { databaseUrl: pgUrl(PRICES_PG_DB), dataDir: '' }
    : { databaseUrl: undefined, dataDir: PGLITE_DATA_DIR };

export const openBenchDb = (kind: Kind) => openDatabase(targetOf(kind));

const sameParams = (a: SeedParams, b: SeedParams) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What the database's marker says: a complete data set (SeedInfo), or one loaded up to its
 * roll-ups (`loaded`: the seed stopped there, and goes on from there).
 */
type Marker = SeedInfo | { loaded: LoadedSeed };

async function readAnyMarker(kind: Kind): Promise<Marker | undefined> {
  if (kind === 'pglite') {
    const file = path.join(PGLITE_DATA_DIR, MARKER_FILE);
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Marker) : undefined;
  }
  let db: Database;
  try {
    db = await openBenchDb('pg');
  } catch {
    return undefined;
  }
  try {
    const r = await db.query<{ c: string | null }>(
      `select shobj_description(oid, 'pg_database') as c from pg_database where datname = current_database()`,
    );
    const c = r.rows[0]?.c;
    return c ? (JSON.parse(c) as Marker) : undefined;
  } finally {
    await db.close();
  }
}

/** The marker of a complete data set, if there is one (PostgreSQL: the database may not exist). */
export async function readMarker(kind: Kind): Promise<SeedInfo | undefined> {
  const m = await readAnyMarker(kind);
  return m && !('loaded' in m) ? m : undefined;
}

async function writeMarker(db: Database, kind: Kind, info: Marker) {
  if (kind === 'pglite') {
    fs.writeFileSync(path.join(PGLITE_DATA_DIR, MARKER_FILE), JSON.stringify(info, null, 2) + '\n');
    return;
  }
  // COMMENT takes no parameters; the JSON is ours (no user input), quoted as a literal.
  await db.query(`comment on database ${PRICES_PG_DB} is '${JSON.stringify(info).replace(/'/g, "''")}'`);
}

/** A uniform number in [0, 1) from an int8 expression, the same on both databases. */
const u = (expr: string) => `((hashint8((${expr})::int8)::float8 + 2147483648.0) / 4294967296.0)`;

/**
 * One statement that writes the observations of steps [$2, $3) of every series, in time order
 * (so, as in production, one series' rows are spread over the whole table, not side by side).
 * $1 account, $4 start time, $5 seconds per step, $6 steps per series, $7 own series' step.
 *
 * Per series (key h): a price level that changes at segment boundaries every 10-50 steps (3.6-18
 * days at 1000 steps a year) by a few percent, a 10% chance per segment of a 15% promotion, a
 * drift of up to +-10% over the year, each competitor 0-20% off the product's base, out-of-stock
 * spells (6% of 37-step blocks, about two weeks each), 0.3% of observations with unknown stock.
 * Competitor 8 sells in GBP, competitor 9 in CHF (no exchange rate), the rest in the product's
 * currency. Our own series (listing NULL, source api) changes less often and is always in stock.
 */
const OBSERVATIONS_SQL = `
insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source, created_at)
select $1, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source, observed_at
  from (
    select product_id, competitor_id, listing_id, currency, source,
           $4::timestamptz + make_interval(secs => (k + 0.5 + 0.8 * (${u('h + k * 13 + 5')} - 0.5)) * $5::float8) as observed_at,
           greatest(0.99, round((base * fx * (1 + drift * seg * seg_len / $6::float8)
                                  * (0.96 + 0.08 * ${u('h + seg * 7 + 1')})
                                  * case when ${u('h + seg * 7 + 2')} < 0.1 then 0.85 else 1 end)::numeric) - 0.01) as price,
           case when own then true
                when ${u('h + sseg * 11 + 3')} < 0.06 then false
                when ${u('h + k * 17 + 4')} < 0.003 then null
                else true end as in_stock
      from (
        select s.*, k, floor((k + s.seg_off) / s.seg_len)::int8 as seg, floor((k + s.stock_off) / 37)::int8 as sseg
          from generate_series($2::int, $3::int - 1) as k
         cross join (
           select s0.*,
                  (10 + floor(${u('h + 22')} * 40) * case when own then 3 else 1 end)::int as seg_len,
                  floor(${u('h + 21')} * 50)::int as seg_off,
                  floor(${u('h + 23')} * 37)::int as stock_off,
                  0.2 * (${u('h + 24')} - 0.5) as drift
             from (
               select p.id as product_id, c.id as competitor_id, l.id as listing_id, c.id is null as own,
                      case when c.id is null then 'api' else 'scrape' end as source,
                      coalesce(c.currency, p.currency) as currency,
                      p.base_price::float8
                        * case when c.id is null then 1 else 0.9 + 0.2 * ${u('(p.n * 64 + c.n)::int8 * 1000003 + 8')} end as base,
                      case when c.currency is null or c.currency = p.currency then 1.0
                           when c.currency = 'GBP' then case p.currency when 'USD' then 1 / 1.27 else 1 / 1.17 end
                           else case p.currency when 'USD' then 0.88 else 0.95 end end as fx,
                      (p.n * 64 + coalesce(c.n, 63))::int8 * 1000003 as h
                 from (select id, currency, base_price, substr(sku, 4)::int as n from products
                        where account_id = $1 and sku like 'BP-%') p
                cross join (select c.id, c.n, case c.n when 8 then 'GBP' when 9 then 'CHF' end as currency
                              from (select id, substr(domain, 5, position('.' in domain) - 5)::int as n
                                      from competitors where account_id = $1) c
                             union all select null::text, null::int, null::text) c
                 left join listings l on l.product_id = p.id and l.competitor_id = c.id
             ) s0
         ) s
         where not s.own or k % $7::int = 0
      ) o
  ) x
 order by observed_at`;

/** The migration's backfill of price_series, for the bench account. */
const SERIES_SQL = `
insert into price_series (account_id, product_id, competitor_id, latest_price, latest_currency, latest_in_stock,
                          latest_observed_at, latest_listing_id, latest_source, latest_observation_id, first_observed_at)
select distinct on (product_id, competitor_id)
       account_id, product_id, competitor_id, price, currency, in_stock, observed_at, listing_id, source, id,
       min(observed_at) over (partition by product_id, competitor_id)
  from price_observations where account_id = $1
 order by product_id, competitor_id, observed_at desc, id desc`;

/**
 * What the trigger would have recorded had it run for every observation in time order: each
 * change numbered in its series (1, 2, 3 ...: the per-series `sequence` of migration 0004).
 */
const CHANGES_SQL = `
insert into price_changes (account_id, product_id, competitor_id, listing_id, observation_id,
                           old_price, old_currency, old_in_stock, old_observed_at,
                           new_price, new_currency, new_in_stock, observed_at, source, created_at, sequence)
select account_id, product_id, competitor_id, listing_id, id,
       prev_price, prev_currency, prev_in_stock, prev_observed_at,
       price, currency, in_stock, observed_at, source, observed_at,
       row_number() over (partition by product_id, competitor_id order by observed_at, id)
  from (
    select o.*,
           lag(price) over s as prev_price, lag(currency) over s as prev_currency,
           lag(in_stock) over s as prev_in_stock, lag(observed_at) over s as prev_observed_at
      from price_observations o where account_id = $1
    window s as (partition by product_id, competitor_id order by observed_at, id)
  ) c
 where prev_observed_at is not null
   and (price <> prev_price or currency <> prev_currency or in_stock is distinct from prev_in_stock)
 order by observed_at, id`;

/**
 * The hourly aggregates of the products $2 (0015's backfill), built only with BENCH_PRICES_HOURS=1:
 * the benchmark reads UTC days, and a year of hours of 5 000 products is ~20 GB more on disk.
 */
const HOURS_SQL = `
insert into price_hours (account_id, product_id, competitor_id, series, currency, hour, open_at, open_id, open,
                         close_at, close_id, close, min, max, count, total)
select min(account_id), product_id, min(competitor_id), coalesce(competitor_id, ''), currency,
       date_trunc('hour', observed_at, 'UTC'),
       min(observed_at), (array_agg(id order by observed_at, id))[1], (array_agg(price order by observed_at, id))[1],
       max(observed_at), (array_agg(id order by observed_at desc, id desc))[1],
       (array_agg(price order by observed_at desc, id desc))[1],
       min(price), max(price), sum(samples), sum(coalesce(price_sum, price * samples))
  from price_observations where account_id = $1 and product_id = any($2::text[])
 group by product_id, coalesce(competitor_id, ''), currency, date_trunc('hour', observed_at, 'UTC')`;

/**
 * The day rows of the products $2, every column in one pass over their observations: what 0017
 * builds from the hours, 0018's trends columns (`price_days_spans`: each observation's span to
 * the next one in its series-day, or to the day's end) and 0021's carries
 * (`price_days_carries_rebuild`: the previous day row's closing state on each day's opening row),
 * with the same expressions. Equal to those three steps row for row (compared on a 1.01 M seed:
 * no row differs either way), a third of their time on PostgreSQL (the same on the embedded
 * engine), and written once instead of updated twice. Inserted in key order: a product's days lie
 * together, as the pack task leaves them.
 */
const DAYS_SQL = `with o as (
  select o.account_id, o.product_id, o.competitor_id, coalesce(o.competitor_id, '') as series, o.currency,
         date_trunc('day', o.observed_at, 'UTC') as day, o.id, o.price, o.in_stock, o.observed_at, o.samples, o.price_sum,
         coalesce(o.price_sum / o.samples, o.price) as mean,
         (extract(epoch from coalesce(lead(o.observed_at) over w, date_trunc('day', o.observed_at, 'UTC') + interval '24 hours') - o.observed_at)
           * 1000000)::bigint as us
    from price_observations o
   where o.account_id = $1 and o.product_id = any($2::text[])
  window w as (partition by o.product_id, coalesce(o.competitor_id, ''), date_trunc('day', o.observed_at, 'UTC') order by o.observed_at, o.id)
),
g as (
  select min(o.account_id) as account_id, o.product_id, min(o.competitor_id) as competitor_id, o.series, o.currency, o.day,
         min(o.observed_at) as open_at, (array_agg(o.id order by o.observed_at, o.id))[1] as open_id,
         (array_agg(o.price order by o.observed_at, o.id))[1] as open,
         max(o.observed_at) as close_at, (array_agg(o.id order by o.observed_at desc, o.id desc))[1] as close_id,
         (array_agg(o.price order by o.observed_at desc, o.id desc))[1] as close,
         min(o.price) as min, max(o.price) as max, sum(o.samples) as count, sum(coalesce(o.price_sum, o.price * o.samples)) as total,
         (array_agg(o.price order by o.price::float8, o.observed_at desc) filter (where o.in_stock is not false))[1] as low,
         (array_agg(o.observed_at order by o.price::float8, o.observed_at desc) filter (where o.in_stock is not false))[1] as low_at,
         (array_agg(o.price order by o.price::float8 desc, o.observed_at desc) filter (where o.in_stock is not false))[1] as high,
         (array_agg(o.observed_at order by o.price::float8 desc, o.observed_at desc) filter (where o.in_stock is not false))[1] as high_at,
         min(o.price) filter (where o.in_stock is not false) as priced_min,
         coalesce(sum(o.us) filter (where o.in_stock is not false), 0)::bigint as priced_us,
         coalesce(sum(o.mean * o.us) filter (where o.in_stock is not false), 0) as priced_sum,
         count(*) filter (where o.in_stock is not false) as priced_n,
         coalesce(sum(o.mean) filter (where o.in_stock is not false), 0) as priced_means,
         coalesce(sum(o.us) filter (where o.in_stock = false), 0)::bigint as oos_us,
         coalesce(sum(o.us) filter (where o.in_stock is not null), 0)::bigint as known_us,
         (array_agg(o.in_stock order by o.observed_at desc, o.id desc))[1] as close_in_stock,
         (array_agg(o.mean order by o.observed_at desc, o.id desc))[1] as close_mean
    from o
   group by o.product_id, o.series, o.currency, o.day
),
cl as (
  select x.product_id, x.series, x.day,
         lag(x.day) over w as prev_day, lag(x.currency) over w as prev_currency,
         lag(x.close_in_stock) over w as prev_in_stock, lag(x.close_mean) over w as prev_mean
    from (select distinct on (g.product_id, g.series, g.day) g.product_id, g.series, g.day, g.currency, g.close_in_stock, g.close_mean
            from g order by g.product_id, g.series, g.day, g.close_at desc, g.close_id desc) x
  window w as (partition by x.product_id, x.series order by x.day)
)
insert into price_days (account_id, product_id, competitor_id, series, currency, day, open_at, open_id, open, close_at, close_id, close,
                  min, max, count, total, low, low_at, high, high_at, priced_min, priced_us, priced_sum, priced_n, priced_means,
                  oos_us, known_us, close_in_stock, close_mean, prev_day, prev_currency, prev_in_stock, prev_mean)
select g.account_id, g.product_id, g.competitor_id, g.series, g.currency, g.day, g.open_at, g.open_id, g.open, g.close_at, g.close_id, g.close,
       g.min, g.max, g.count, g.total, g.low, g.low_at, g.high, g.high_at, g.priced_min, g.priced_us, g.priced_sum, g.priced_n, g.priced_means,
       g.oos_us, g.known_us, g.close_in_stock, g.close_mean,
       case when o.opening then cl.prev_day end, case when o.opening then cl.prev_currency end,
       case when o.opening then cl.prev_in_stock end, case when o.opening then cl.prev_mean end
  from (select g.*, row_number() over (partition by g.product_id, g.series, g.day order by g.open_at, g.open_id) = 1 as opening from g) o
  join g on g.product_id = o.product_id and g.series = o.series and g.day = o.day and g.currency = o.currency
  join cl on cl.product_id = o.product_id and cl.series = o.series and cl.day = o.day
 order by g.product_id, g.day, g.series, g.currency`;

/** Each series' count of changes, which the trigger numbers the next change after. */
const SERIES_CHANGES_SQL = `
update price_series s set changes = n.count
  from (select product_id, competitor_id, count(*) as count from price_changes
         where account_id = $1 group by product_id, competitor_id) n
 where s.account_id = $1 and s.product_id = n.product_id and s.competitor_id is not distinct from n.competitor_id`;

function duBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += duBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

/** One multi-row INSERT through unnest: `head` values go into every row (named first in `columns`). */
async function insertRows(
  db: Database,
  table: string,
  columns: string[],
  head: unknown[],
  types: string[],
  rows: unknown[][],
) {
  const cols = types.map((_, i) => rows.map((r) => r[i]));
  const at = head.length;
  await db.query(
    `insert into ${table} (${columns.join(', ')}) select ${head
      .map((_, i) => `$${i + 1}`)
      .concat(['u.*'])
      .join(', ')}
       from unnest(${types.map((t, i) => `$${at + i + 1}::${t}[]`).join(', ')}) as u`,
    [...head, ...cols],
  );
}

const pad = (n: number) => String(n).padStart(5, '0');
const secs = (t0: number) => Math.round((performance.now() - t0) / 100) / 10;

/**
 * Seeds the data set: drops whatever was there and loads it (`loadPrices`), then builds its
 * roll-ups and writes the complete marker (`finishPrices`). A seed stopped after its load (it
 * left a `loaded` marker) goes on from its roll-ups instead (BENCH_PRICES_RESUME=0: from scratch).
 */
export async function seedPrices(kind: Kind, log: (s: string) => void = console.log): Promise<SeedInfo> {
  const marker = process.env.BENCH_PRICES_RESUME === '0' ? undefined : await readAnyMarker(kind);
  const stopRss = sampleRss(process.pid, 500);
  try {
    let loaded: LoadedSeed;
    if (marker && 'loaded' in marker && sameParams(marker.loaded.params, seedParams(kind))) {
      loaded = marker.loaded;
      log(
        `  ${kind}: loaded ${loaded.loadedAt} (${loaded.observations.toLocaleString('en')} observations): on from its roll-ups`,
      );
    } else loaded = await loadPrices(kind, log);
    const info = await finishPrices(kind, loaded, log);
    info.seedRssPeakMiB = Math.max(loaded.seedRssPeakMiB, stopRss().peak);
    return info;
  } finally {
    stopRss();
  }
}

/**
 * Drops whatever was there, loads the catalogue and the observations and builds price_series and
 * price_changes. PostgreSQL: recreates the database. Embedded: a new DATA_DIR. Ends with a
 * `loaded` marker, so a seed stopped in its roll-ups need not load again.
 */
async function loadPrices(kind: Kind, log: (s: string) => void): Promise<LoadedSeed> {
  const p = seedParams(kind);
  const started = performance.now();
  const load1 = [os.loadavg()[0]!];
  const stopRss = sampleRss(process.pid, 500);
  if (kind === 'pg') await recreatePgDatabase(PRICES_PG_DB);
  else {
    fs.rmSync(PGLITE_DATA_DIR, { recursive: true, force: true });
    fs.mkdirSync(PGLITE_DATA_DIR, { recursive: true });
  }
  const seconds: Record<string, number> = {};
  let t = performance.now();
  const db = await openBenchDb(kind);
  try {
    await migrate(db);
    seconds.open_and_migrate = secs(t);
    t = performance.now();
    const { account_id: accountId } = await createKey(db, { plan: 'business', name: ACCOUNT_NAME });
    await insertRows(
      db,
      'exchange_rates',
      ['account_id', 'base', 'quote', 'rate'],
      [accountId],
      ['text', 'text', 'numeric'],
      RATES,
    );
    const competitors = Array.from({ length: p.competitors }, (_, i) => [
      newId('comp'),
      `Shop ${i}`,
      `https://www.shop${i}.example/`,
      `shop${i}.example`,
    ]);
    await insertRows(
      db,
      'competitors',
      ['account_id', 'id', 'name', 'website', 'domain'],
      [accountId],
      ['text', 'text', 'text', 'text'],
      competitors,
    );
    const products: unknown[][] = [];
    const add = (prefix: string, i: number) =>
      products.push([
        newId('prod'),
        `Bench product ${prefix}${i}`,
        `${prefix}-${pad(i)}`,
        (5 + ((i * 7919) % 49_500) / 100).toFixed(2),
        i % 5 === 4 ? 'EUR' : 'USD',
      ]);
    for (let i = 0; i < p.products; i++) add('BP', i);
    for (let i = 0; i < p.ingestProducts; i++) add('BI', i);
    for (let i = 0; i < products.length; i += 5000) {
      await insertRows(
        db,
        'products',
        ['account_id', 'id', 'name', 'sku', 'base_price', 'currency'],
        [accountId],
        ['text', 'text', 'text', 'numeric', 'text'],
        products.slice(i, i + 5000),
      );
    }
    // One listing per competitor and bench product, disabled: the server's worker (embedded:
    // inside `start`) must never fetch these URLs.
    const listings: unknown[][] = [];
    for (let i = 0; i < p.products; i++) {
      for (const c of competitors)
        listings.push([newId('lst'), products[i]![0], c[0], `https://www.${c[3] as string}/p/${pad(i)}`]);
    }
    for (let i = 0; i < listings.length; i += 5000) {
      await db.query(
        `insert into listings (account_id, id, product_id, competitor_id, url, enabled, status, next_check_at)
         select $1, u.*, false, 'ok', 'infinity' from unnest($2::text[], $3::text[], $4::text[], $5::text[]) as u`,
        [accountId, ...[0, 1, 2, 3].map((k) => listings.slice(i, i + 5000).map((r) => r[k]))],
      );
    }
    seconds.catalogue = secs(t);

    // Bulk load: the tracking trigger off (price_series and price_changes are rebuilt below in one
    // statement each), the secondary indexes dropped and rebuilt afterwards (their exact
    // definitions are read back from the catalogue), foreign-key checks skipped for the load's
    // transactions (session_replication_role = replica; every id comes from the tables above).
    t = performance.now();
    await db.exec('alter table price_observations disable trigger price_observations_track');
    const indexes = (
      await db.query<{ name: string; def: string }>(
        `select indexname as name, indexdef as def from pg_indexes
          where schemaname = current_schema() and tablename = 'price_observations' and indexname <> 'price_observations_pkey'`,
      )
    ).rows;
    for (const ix of indexes) await db.exec(`drop index ${ix.name}`);
    const stepS = (p.days * 86_400) / p.perSeries;
    const endAt = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const startAt = new Date(endAt.getTime() - p.days * 86_400_000);
    // The months of the span get their partitions first (a server's partitions task
    // would move them out of the default partition later, in one long statement per month).
    await ensureObservationPartitions(db, startAt, Math.ceil(p.days / 28) + 1);
    const seriesCount = p.products * (p.competitors + 1);
    const chunkSteps = Math.max(1, Math.floor((kind === 'pg' ? 500_000 : 100_000) / seriesCount));
    let rows = 0;
    for (let k0 = 0; k0 < p.perSeries; k0 += chunkSteps) {
      const k1 = Math.min(p.perSeries, k0 + chunkSteps);
      const n = await db.transaction(async (tx) => {
        await tx.query(
          `select set_config('session_replication_role', 'replica', true), set_config('synchronous_commit', 'off', true)`,
        );
        return (
          await tx.query(OBSERVATIONS_SQL, [accountId, k0, k1, startAt.toISOString(), stepS, p.perSeries, p.ownEvery])
        ).rowCount;
      });
      rows += n;
      if (k1 === p.perSeries || Math.floor(k1 / (p.perSeries / 10)) > Math.floor(k0 / (p.perSeries / 10))) {
        const s = (performance.now() - t) / 1000;
        log(
          `  ${kind}: ${rows.toLocaleString('en')} observations, ${Math.round(s)} s, ${Math.round(rows / s).toLocaleString('en')} rows/s`,
        );
      }
    }
    seconds.load_observations = secs(t);
    const rowsPerSecondLoad = Math.round(rows / seconds.load_observations);
    load1.push(os.loadavg()[0]!);

    t = performance.now();
    await db.transaction(async (tx) => {
      if (kind === 'pg') await tx.query(`select set_config('maintenance_work_mem', '1GB', true)`);
      // pg_indexes gives a partitioned table's index as `ON ONLY` (the parent alone, left
      // invalid): without ONLY it is built on every partition too.
      // An index built online in service (src/db/online-indexes.ts) is built whole here, and
      // the one it replaces is not built again: the service's task drops it.
      const replaced = new Set(
        OBSERVATION_INDEXES.filter((o) => indexes.some((ix) => ix.name === o.index)).map((o) => o.replaces),
      );
      for (const ix of indexes) if (!replaced.has(ix.name)) await tx.exec(ix.def.replace(/ ON ONLY /i, ' ON '));
    });
    seconds.create_indexes = secs(t);
    log(`  ${kind}: indexes rebuilt in ${seconds.create_indexes} s`);

    t = performance.now();
    const series = (await db.query(SERIES_SQL, [accountId])).rowCount;
    seconds.price_series = secs(t);
    t = performance.now();
    const changes = (await db.query(CHANGES_SQL, [accountId])).rowCount;
    await db.query(SERIES_CHANGES_SQL, [accountId]);
    seconds.price_changes = secs(t);
    log(
      `  ${kind}: ${series} series (${seconds.price_series} s), ${changes.toLocaleString('en')} price changes (${seconds.price_changes} s)`,
    );
    await db.exec('alter table price_observations enable trigger price_observations_track');
    const loaded: LoadedSeed = {
      params: p,
      accountId,
      startAt: startAt.toISOString(),
      endAt: endAt.toISOString(),
      observations: rows,
      series,
      priceChanges: changes,
      seconds: { ...seconds, total: secs(started) },
      rowsPerSecondLoad,
      load1: [...load1, os.loadavg()[0]!],
      seedRssPeakMiB: stopRss().peak,
      loadedAt: new Date().toISOString(),
    };
    await writeMarker(db, kind, { loaded });
    return loaded;
  } finally {
    stopRss();
    await db.close();
  }
}

/**
 * The roll-ups of a loaded data set, then `vacuum analyze`, its sizes and the complete marker
 * (written last, so an interrupted seed is never reused). The day rows are built a batch of
 * products at a time in BENCH_PRICES_SEED_JOBS connections at once (PostgreSQL, default 2: one
 * per core here; the embedded engine has one).
 */
async function finishPrices(kind: Kind, loaded: LoadedSeed, log: (s: string) => void): Promise<SeedInfo> {
  const { params: p, accountId } = loaded;
  const started = performance.now();
  const seconds: Record<string, number> = { ...loaded.seconds };
  const load1 = [...loaded.load1];
  const db = await openBenchDb(kind);
  try {
    let t = performance.now();
    const { days, hours } = await buildRollups(kind, db, accountId, log);
    seconds.price_days = secs(t);
    log(
      `  ${kind}: ${days.toLocaleString('en')} daily aggregates with their trends columns and carries` +
        (hours ? `, ${hours.toLocaleString('en')} hourly ones` : '') +
        ` (${seconds.price_days} s)`,
    );

    t = performance.now();
    await db.exec('vacuum analyze');
    seconds.vacuum_analyze = secs(t);
    log(`  ${kind}: vacuum analyze ${seconds.vacuum_analyze} s`);

    const counts = (
      await db.query<{
        own: number;
        competitor: number;
        db: number;
        obs: number;
        heap: number;
        idx: number;
        row: number;
        changes: number;
        series: number;
        hours: number;
        days: number;
      }>(
        `select count(*) filter (where competitor_id is null)::int8 as own, count(*) filter (where competitor_id is not null)::int8 as competitor,
                pg_database_size(current_database())::int8 as db,
                (select sum(pg_total_relation_size(inhrelid))::int8 from pg_inherits where inhparent = 'price_observations'::regclass) as obs,
                (select sum(pg_relation_size(inhrelid))::int8 from pg_inherits where inhparent = 'price_observations'::regclass) as heap,
                (select sum(pg_indexes_size(inhrelid))::int8 from pg_inherits where inhparent = 'price_observations'::regclass) as idx,
                round(avg(pg_column_size(o.*)))::int8 as row,
                pg_total_relation_size('price_changes')::int8 as changes, pg_total_relation_size('price_series')::int8 as series,
                (select sum(pg_total_relation_size(inhrelid))::int8 from pg_inherits where inhparent = 'price_hours'::regclass) as hours,
                (select sum(pg_total_relation_size(inhrelid))::int8 from pg_inherits where inhparent = 'price_days'::regclass) as days
           from price_observations o`,
      )
    ).rows[0]!;
    seconds.total = Math.round((loaded.seconds.total! + secs(started)) * 10) / 10;
    load1.push(os.loadavg()[0]!);
    const info: SeedInfo = {
      params: p,
      kind,
      startAt: loaded.startAt,
      endAt: loaded.endAt,
      observations: loaded.observations,
      competitorObservations: counts.competitor,
      ownObservations: counts.own,
      priceChanges: loaded.priceChanges,
      series: loaded.series,
      seconds,
      rowsPerSecondLoad: loaded.rowsPerSecondLoad,
      sizeBytes: {
        database: counts.db,
        observations: counts.obs,
        observationsHeap: counts.heap,
        observationsIndexes: counts.idx,
        observationRowMean: counts.row,
        priceChanges: counts.changes,
        priceSeries: counts.series,
        priceHours: counts.hours,
        priceDays: counts.days,
      },
      seedRssPeakMiB: 0,
      load1: load1.map((l) => Math.round(l * 100) / 100),
      seededAt: new Date().toISOString(),
    };
    await db.close();
    if (kind === 'pglite') info.sizeBytes.dataDirOnDisk = duBytes(PGLITE_DATA_DIR);
    // The marker last: only a complete data set carries one.
    const m = await openBenchDb(kind);
    try {
      await writeMarker(m, kind, info);
    } finally {
      await m.close();
    }
    return info;
  } finally {
    await db.close().catch(() => undefined);
  }
}

/**
 * The day rows (and with BENCH_PRICES_HOURS=1 the hours) of every bench product, a transaction
 * per batch of 50 products, in BENCH_PRICES_SEED_JOBS connections at once. Triggers
 * and foreign-key checks off (session_replication_role), as in the load: the blocks and month
 * texts those triggers would drop do not exist yet (bench:prices builds them).
 */
async function buildRollups(kind: Kind, db: Database, accountId: string, log: (s: string) => void) {
  const ids = (
    await db.query<{ id: string }>(`select id from products where account_id = $1 and sku like 'BP-%' order by id`, [
      accountId,
    ])
  ).rows.map((r) => r.id);
  const withHours = process.env.BENCH_PRICES_HOURS === '1';
  const jobs = kind === 'pg' ? Math.max(1, env('BENCH_PRICES_SEED_JOBS', 2)) : 1;
  const t = performance.now();
  let days = 0;
  let hours = 0;
  const done = (n: number, count: number) => {
    if (Math.floor((n * 10) / count) > Math.floor(((n - 1) * 10) / count))
      log(
        `  ${kind}: day rows of ${n} / ${count} batches of products, ${Math.round((performance.now() - t) / 1000)} s`,
      );
  };
  await inBatches(
    db,
    () => openBenchDb(kind),
    ids,
    { size: 50, jobs, done },
    async (tx, batch) => {
      await tx.query(
        `select set_config('session_replication_role', 'replica', true), set_config('synchronous_commit', 'off', true)` +
          (kind === 'pg' ? `, set_config('work_mem', '256MB', true)` : ''),
      );
      const h = withHours ? (await tx.query(HOURS_SQL, [accountId, batch])).rowCount : 0;
      const d = (await tx.query(DAYS_SQL, [accountId, batch])).rowCount;
      hours += h;
      days += d;
    },
  );
  return { days, hours };
}

/** The data set's marker when it is complete and made with the current parameters, else undefined. */
export async function existingSeed(kind: Kind): Promise<SeedInfo | undefined> {
  const m = await readMarker(kind);
  return m && sameParams(m.params, seedParams(kind)) ? m : undefined;
}

export interface Dataset {
  accountId: string;
  productIds: string[];
  ingestProductIds: string[];
  competitorIds: string[];
}

/** The ids of a seeded data set, read back from the database. */
export async function loadDataset(db: Database): Promise<Dataset> {
  const acct = await db.query<{ id: string }>('select id from accounts where name = $1', [ACCOUNT_NAME]);
  const accountId = acct.rows[0]?.id;
  if (!accountId) throw new Error('no bench account: run `npm run bench:prices-seed`');
  const ids = async (sql: string) => (await db.query<{ id: string }>(sql, [accountId])).rows.map((r) => r.id);
  return {
    accountId,
    productIds: await ids(`select id from products where account_id = $1 and sku like 'BP-%' order by sku`),
    ingestProductIds: await ids(`select id from products where account_id = $1 and sku like 'BI-%' order by sku`),
    competitorIds: await ids(`select id from competitors where account_id = $1 order by name`),
  };
}

/**
 * A raw multi-row INSERT of n observations: VALUES, the account a shared parameter ($1), then
 * product, competitor, price, currency, in_stock, observed_at of each row.
 */
export function rawInsert(n: number): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = 2 + i * 6;
    rows.push(`($1, $${b}, $${b + 1}, null, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, 'api')`);
  }
  return `insert into price_observations (account_id, product_id, competitor_id, listing_id, price, currency, in_stock, observed_at, source) values ${rows.join(', ')}`;
}
