// `node --import tsx bench/prices-cover-ab.ts` on the seeded bench:prices database (BENCH_PRICES_PG_DB,
// ph_bench_prices), once its covering series index is built (`npm run bench:online-index`);
// N=80 products per side, OFF=3200 where in the products (by id) they start.
// The trends statement of products not read before, each read once (a first read: its pages come
// from the OS cache or the disk), interleaved ABBA: `cover` as the service runs it (the edges' raw
// rows read from the covering index alone), `heap` with index-only scans turned off for the
// statement (the same index, then each row's heap page, as with the series index it replaced).
// Statement time from this client and the blocks PostgreSQL read from outside shared buffers
// (pg_stat_database around each). For the cold case from the disk: stop PostgreSQL, `sync; echo 3 >
// /proc/sys/vm/drop_caches`, start it, then run this.
import { trendsQuery } from '../src/prices/trends/sql.js';
import { percentile } from './lib/load.js';
import { type AbProduct, openTrendsAb } from './lib/trends-ab.js';

const { c, products } = await openTrendsAb();
type Row = AbProduct;
const run = async (indexOnly: 'on' | 'off', p: Row) => {
  const q = trendsQuery(p.account_id, p.id);
  await c.query('begin');
  await c.query(`set local enable_indexonlyscan = ${indexOnly}`);
  const t = performance.now();
  await c.query({ name: `trends_${indexOnly}`, text: q.text, values: q.values });
  const ms = performance.now() - t;
  await c.query('commit');
  return ms;
};
// Both prepared statements past their first runs (custom plans) on products outside the sample.
const warm = (await c.query<Row>(`select id, account_id from products order by id limit 3`)).rows;
for (const v of ['on', 'off'] as const) for (let i = 0; i < 7; i++) await run(v, warm[i % 3]!);

const blocksRead = async () => {
  await c.query(`select pg_stat_force_next_flush()`);
  const r = await c.query<{ r: string }>(
    `select sum(blks_read)::int8 as r from pg_stat_database where datname = current_database()`,
  );
  return Number(r.rows[0]!.r);
};
const sides = {
  cover: { ms: [] as number[], pages: [] as number[] },
  heap: { ms: [] as number[], pages: [] as number[] },
};
for (const [i, p] of products.entries()) {
  const side = i % 4 === 0 || i % 4 === 3 ? 'cover' : 'heap';
  const b0 = await blocksRead();
  sides[side].ms.push(await run(side === 'cover' ? 'on' : 'off', p));
  sides[side].pages.push((await blocksRead()) - b0);
}
const pct = (xs: number[], q: number) => Math.round(percentile(Float64Array.from(xs).sort(), q) * 10) / 10;
for (const [k, v] of Object.entries(sides))
  console.log(
    `${k.padEnd(5)} n ${v.ms.length}  p50 ${pct(v.ms, 50)}  p90 ${pct(v.ms, 90)}  p95 ${pct(v.ms, 95)}  max ${pct(v.ms, 100)} ms  blocks read p50 ${pct(v.pages, 50)}`,
  );
await c.end();
