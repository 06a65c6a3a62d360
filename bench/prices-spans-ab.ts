// `node --import tsx bench/prices-spans-ab.ts` on the seeded bench:prices database (BENCH_PRICES_PG_DB,
// ph_bench_prices), once `npm run bench:prices` built its blocks and today's spans (migration 0027);
// N=80 products per side, OFF=3200 where in the products (by id) they start, WARM=3 reads after
// the first.
// The trends statement of products not read before, interleaved ABBA: `spans` as the service runs
// it (today's spans read), `blocks` the same text told the product has no spans (the blocks and
// day rows read, as before 0027). Per product: the first read (its pages from the OS cache or the
// disk) with the blocks PostgreSQL read from outside shared buffers (pg_stat_database around it),
// then WARM reads again, timed, with the backend's CPU (/proc) around them. For the cold case from
// the disk: stop PostgreSQL, `sync; echo 3 > /proc/sys/vm/drop_caches`, start it, then run this.
import fs from 'node:fs';
import { trendsQuery } from '../src/prices/trends/sql.js';
import { percentile } from './lib/load.js';
import { type AbProduct, openTrendsAb } from './lib/trends-ab.js';

const { c, products } = await openTrendsAb();
const warmReads = Number(process.env.WARM ?? 3);
type Row = AbProduct;
const SPANS_TEST = 'select exists (select from sp) and not exists (';
const texts = { spans: trendsQuery('', '').text, blocks: '' };
if (!texts.spans.includes(SPANS_TEST)) throw new Error('the statement no longer tests for spans this way');
texts.blocks = texts.spans.replace(SPANS_TEST, 'select false and not exists (');
type Side = keyof typeof texts;
const run = async (side: Side, p: Row) => {
  const t = performance.now();
  await c.query({ name: `trends_${side}`, text: texts[side], values: trendsQuery(p.account_id, p.id).values });
  return performance.now() - t;
};
// Both prepared statements past their first runs (custom plans) on products outside the sample.
const warm = (await c.query<Row>(`select id, account_id from products order by id limit 3`)).rows;
for (const s of ['spans', 'blocks'] as const) for (let i = 0; i < 7; i++) await run(s, warm[i % 3]!);

const pid = (await c.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]!.p;
const cpuMs = () => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const blocksRead = async () => {
  await c.query(`select pg_stat_force_next_flush()`);
  const r = await c.query<{ r: string }>(
    `select sum(blks_read)::int8 as r from pg_stat_database where datname = current_database()`,
  );
  return Number(r.rows[0]!.r);
};
const sides = Object.fromEntries(
  (['spans', 'blocks'] as const).map((s) => [
    s,
    { cold: [] as number[], pages: [] as number[], warm: [] as number[], cpu: 0 },
  ]),
) as Record<Side, { cold: number[]; pages: number[]; warm: number[]; cpu: number }>;
for (const [i, p] of products.entries()) {
  const side: Side = i % 4 === 0 || i % 4 === 3 ? 'spans' : 'blocks';
  const b0 = await blocksRead();
  sides[side].cold.push(await run(side, p));
  sides[side].pages.push((await blocksRead()) - b0);
  const c0 = cpuMs();
  for (let k = 0; k < warmReads; k++) sides[side].warm.push(await run(side, p));
  sides[side].cpu += cpuMs() - c0;
}
const pct = (xs: number[], q: number) => Math.round(percentile(Float64Array.from(xs).sort(), q) * 10) / 10;
for (const [k, v] of Object.entries(sides))
  console.log(
    `${k.padEnd(6)} n ${v.cold.length}  first read p50 ${pct(v.cold, 50)}  p95 ${pct(v.cold, 95)}  max ${pct(v.cold, 100)} ms, blocks read p50 ${pct(v.pages, 50)} | again p50 ${pct(v.warm, 50)}  p95 ${pct(v.warm, 95)} ms, backend CPU ${(v.cpu / v.warm.length).toFixed(2)} ms a read`,
  );
await c.end();
