/**
 * `node --import tsx bench/prices-cold.ts [history|trends] [N] [FIRST]`: what a read of a
 * product nobody read lately costs, on the PostgreSQL prices data set (BENCH_PRICES_PG_DB):
 * EXPLAIN (ANALYZE, BUFFERS) of the history (a year of UTC days) or trends statement for N
 * products (20) spread over the data set from FIRST (1), after one other product has warmed the
 * connection's catalogue. Prints each product's execution time and its buffers found in shared
 * buffers (hit) and read from outside them (read), then their median and p95. Run it right after
 * emptying the caches, so that "read" is what a cold product costs:
 *
 *     pg_ctlcluster 15 main restart && sync && echo 3 > /proc/sys/vm/drop_caches
 *
 * (docs/BENCHMARKS.md, "Issue 26: packed months").
 */
import { historyRange } from '../src/prices/history/params.js';
import { historyQuery } from '../src/prices/history/sql.js';
import { trendsQuery } from '../src/prices/trends/sql.js';
import { existingSeed, loadDataset, openBenchDb } from './lib/prices-data.js';

const what = process.argv[2] ?? 'history';
const n = Number(process.argv[3] ?? 20);
const first = Number(process.argv[4] ?? 1);
const seed = await existingSeed('pg');
if (!seed) throw new Error('pg: no data set; run npm run bench:prices-seed');
const db = await openBenchDb('pg');

interface Node {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}
type Explain = [{ Plan: Node; 'Execution Time': number; 'Planning Time': number }];

try {
  const ds = await loadDataset(db);
  const query = (productId: string) => {
    if (what === 'trends') return trendsQuery(ds.accountId, productId);
    const range = historyRange({ interval: 'day', from: seed.startAt, to: seed.endAt });
    if (range.interval === 'raw') throw new Error('interval=day expected');
    return historyQuery({ ...range, interval: range.interval, productId, accountId: ds.accountId });
  };
  const explain = async (productId: string) => {
    const q = query(productId);
    const r = await db.query<{ 'QUERY PLAN': Explain }>(`explain (analyze, buffers, format json) ${q.text}`, q.values);
    const [top] = r.rows[0]!['QUERY PLAN'];
    return {
      ms: top['Execution Time'],
      hit: top.Plan['Shared Hit Blocks'],
      read: top.Plan['Shared Read Blocks'],
    };
  };
  const step = Math.max(1, Math.floor((ds.productIds.length - first) / n));
  const warm = await explain(ds.productIds[0]!);
  console.log(`${what}: warm-up product 0: ${JSON.stringify(warm)}`);
  const rows: { ms: number; hit: number; read: number }[] = [];
  for (let i = 0; i < n; i++) {
    const index = first + i * step;
    const r = await explain(ds.productIds[index % ds.productIds.length]!);
    rows.push(r);
    console.log(`product ${index}: ${r.ms.toFixed(1)} ms, hit ${r.hit}, read ${r.read}`);
  }
  const pick = (key: 'ms' | 'hit' | 'read', q: number) => {
    const sorted = rows.map((r) => r[key]).sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  };
  console.log(
    `${what}, ${n} products: execution median ${pick('ms', 0.5).toFixed(1)} / p95 ${pick('ms', 0.95).toFixed(1)} ms; ` +
      `read median ${pick('read', 0.5)} / p95 ${pick('read', 0.95)}; hit median ${pick('hit', 0.5)}`,
  );
} finally {
  await db.close();
}
