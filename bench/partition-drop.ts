/**
 * bench:partition-drop: how long retention takes to remove a whole month of price observations
 * (src/prices/partitions, docs/PRICES.md "Retention by partition"), for months of several sizes.
 *
 * For each size, a month (2020-01, 2020-02, ...) is filled straight into its partition (the
 * insert trigger is on price_observations, so seeding does not build series and changes), with
 * the table's indexes, next to a month that stays; then the retention call that drops it is
 * timed: dropObservationsBefore(db, first instant of the next month), the same call the
 * `price-retention` task makes. It reports `detach_ms` (until the month has left the live
 * tables: the one step that holds them), `drop_ms` (the whole call, the files' removal included)
 * and, on PostgreSQL, `reader_max_ms`: the longest a query of the next month, looping on another
 * connection meanwhile, took.
 *
 *   BENCH_PARTITION_ROWS  sizes of the month, comma separated (default 1000000,5000000)
 *   BENCH_PARTITION_DELETE=1  also time a row-wise DELETE of the same month (the old way), per size
 *   DATABASE_URL  PostgreSQL (a fresh schema in it); unset: PGlite in a temporary directory
 */
import os from 'node:os';
import { createAccount } from '../src/auth/keys.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open.js';
import { newId } from '../src/ids.js';
import { dropObservationsBefore, ensureObservationPartitions, monthOf } from '../src/prices/partitions/index.js';
import { machine, table, writeResult } from './lib/common.js';
import { testStorage } from '../test/helpers/database.js';

const SIZES = (process.env.BENCH_PARTITION_ROWS ?? '1000000,5000000').split(',').map((s) => Number(s.trim()));
const WITH_DELETE = process.env.BENCH_PARTITION_DELETE === '1';

const s = await testStorage();
const db = await openDatabase(loadConfig(s.env));
const kind = db.kind;
const rows: Record<string, string | number>[] = [];
try {
  await migrate(db);
  const accountId = await createAccount(db);
  const products = Array.from({ length: 100 }, () => newId('prod'));
  const rivals = Array.from({ length: 10 }, () => newId('comp'));
  for (const id of products)
    await db.query(
      `insert into products (id, account_id, name, base_price, currency) values ($1, $2, 'P', 10, 'EUR')`,
      [id, accountId],
    );
  for (const id of rivals) {
    await db.query(
      `insert into competitors (id, account_id, name, website, domain) values ($1, $2, 'R', 'https://r.example', 'r.example')`,
      [id, accountId],
    );
  }

  let month = 0;
  const fill = async (m: ReturnType<typeof monthOf>, n: number) => {
    const spanMs = m.to.getTime() - m.from.getTime();
    // 1000 series (100 products x 10 competitors), evenly spread over the month.
    await db.query(
      `insert into ${m.name} (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
       select $1, ($2::text[])[1 + g % 100], ($3::text[])[1 + (g / 100) % 10], 10 + (g % 997) / 100.0, 'EUR', true,
              $4::timestamptz + (g::float8 / $5 * $6) * interval '1 millisecond', 'api'
         from generate_series(0, $5::int - 1) g`,
      [accountId, products, rivals, m.from.toISOString(), n, spanMs - 1],
    );
  };
  const sizeOf = async (name: string) =>
    (await db.query<{ b: string }>(`select pg_size_pretty(pg_total_relation_size($1::regclass)) as b`, [name])).rows[0]!
      .b;

  for (const n of SIZES) {
    const m = monthOf(new Date(Date.UTC(2020, month++, 1)));
    const next = monthOf(m.to);
    await ensureObservationPartitions(db, m.from, 1);
    let t = performance.now();
    await fill(m, n);
    await fill(next, 10_000);
    const fillS = (performance.now() - t) / 1000;
    if (kind === 'postgres') await db.query(`analyze ${m.name}`);
    const size = await sizeOf(m.name);

    let deleteS: number | undefined;
    if (WITH_DELETE) {
      // The old way, for comparison: one DELETE of the month, then the month filled again.
      t = performance.now();
      await db.query(`delete from price_observations where observed_at >= $1 and observed_at < $2`, [
        m.from.toISOString(),
        m.to.toISOString(),
      ]);
      deleteS = (performance.now() - t) / 1000;
      await fill(m, n);
    }

    // A reader of the month that stays, in a loop while the month goes (PostgreSQL: its own
    // connection of the pool; PGlite has one): the longest it waited is how long the drop held
    // the live table.
    let reading = kind === 'postgres';
    let readerMaxMs = 0;
    const reader = (async () => {
      while (reading) {
        const q = performance.now();
        await db.query(`select count(*) from price_observations where observed_at >= $1 and observed_at < $2`, [
          next.from.toISOString(),
          new Date(next.from.getTime() + 3_600_000).toISOString(),
        ]);
        readerMaxMs = Math.max(readerMaxMs, performance.now() - q);
      }
    })();
    t = performance.now();
    let detachMs = 0;
    const r = await dropObservationsBefore(db, m.to, { onDetached: () => (detachMs = performance.now() - t) });
    const dropMs = performance.now() - t;
    reading = false;
    await reader;
    if (!r.dropped.includes(m.name) || r.deleted !== 0)
      throw new Error(`unexpected retention result ${JSON.stringify(r)}`);
    const kept = (await db.query<{ n: number }>(`select count(*)::int as n from ${next.name}`)).rows[0]!.n;
    if (Number(kept) !== 10_000) throw new Error(`the next month lost rows: ${kept}`);
    // The month next to it, 10 000 rows, dropped the same way: the same time, whatever the size.
    t = performance.now();
    await dropObservationsBefore(db, next.to);
    const smallMs = performance.now() - t;
    rows.push({
      database: kind,
      month: m.name,
      rows: n,
      size,
      fill_s: fillS.toFixed(1),
      ...(deleteS === undefined ? {} : { row_delete_s: deleteS.toFixed(2) }),
      detach_ms: detachMs.toFixed(1),
      drop_ms: dropMs.toFixed(1),
      ...(kind === 'postgres' ? { reader_max_ms: readerMaxMs.toFixed(1) } : {}),
      drop_10k_ms: smallMs.toFixed(1),
      load1: os.loadavg()[0]!.toFixed(1),
    });
    console.log(JSON.stringify(rows.at(-1)));
  }
  table(rows);
  writeResult(`partition-drop-${kind}`, { machine: machine(), results: rows });
} finally {
  await db.close();
  await s.cleanup();
}
