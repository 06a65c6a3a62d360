/**
 * `node --import tsx bench/prices-pack.ts [table ...]`: packs the closed months of the PostgreSQL
 * prices data set (BENCH_PRICES_PG_DB) as the `price-pack` task does (src/prices/partitions/pack.ts,
 * PRICE_PACK_AFTER_DAYS=14), of the tables named (default: every packed table), and prints what
 * each partition took. Measures the task's cost on a large database (docs/BENCHMARKS.md,
 * "Issue 26: packed months").
 *
 * BENCH_PACK_ORDER (columns, as in ORDER BY) rewrites them in that order instead, packed or not:
 * `day, series, product_id` lays the day rows out as a running service writes them (a day at a
 * time for every series), which the seed does not (its last step rewrites them product by
 * product), so that a pack can be measured from the layout it is for.
 */
import { needsPacking, packPartition } from '../src/db/pack.js';
import { listRanges } from '../src/db/partitions.js';
import { OBSERVATION_PARTITIONS } from '../src/prices/partitions/index.js';
import { PACKED_TABLES } from '../src/prices/partitions/pack.js';
import { DAY_MS } from '../src/time.js';
import { openBenchDb } from './lib/prices-data.js';

const names = process.argv.slice(2);
const tables = PACKED_TABLES.filter((t) => names.length === 0 || names.includes(t.table));
const db = await openBenchDb('pg');
try {
  const closedBy = Date.now() - 14 * DAY_MS;
  const started = Date.now();
  let rows = 0;
  const layout = process.env.BENCH_PACK_ORDER;
  for (const { table, column, orderBy } of tables)
    for (const r of (await listRanges(db, 'month', table)).filter((m) => m.to.getTime() <= closedBy).reverse()) {
      if (!layout && !(await needsPacking(db, table, r))) continue;
      const order = layout ?? orderBy;
      const p = await packPartition(db, OBSERVATION_PARTITIONS, table, column, r, {
        ...(order ? { orderBy: order } : {}),
        force: layout !== undefined,
      });
      if (layout) await db.query(`comment on table ${table}_${r.suffix} is null`);
      console.log(p ? JSON.stringify(p) : `${table} ${r.suffix}: gave way`);
      rows += p?.rows ?? 0;
    }
  console.log(`packed ${rows} rows in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await db.close();
}
