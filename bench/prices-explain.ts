/**
 * `node --import tsx bench/prices-explain.ts [history|trends] [N]`: EXPLAIN (ANALYZE, BUFFERS) of
 * the history and trends statements (the builders' own SQL) for product N of the prices data set
 * (BENCH_DB=pg|pglite; the embedded one must not be open by a server). A diagnostic for
 * `npm run bench:prices`.
 */
import { historyRange } from '../src/prices/history/params.js';
import { historyQuery } from '../src/prices/history/sql.js';
import { trendsQuery } from '../src/prices/trends/sql.js';
import { DATABASES } from './lib/common.js';
import { existingSeed, loadDataset, openBenchDb } from './lib/prices-data.js';

const what = process.argv[2] ?? 'history';
const n = Number(process.argv[3] ?? 0);
for (const kind of DATABASES) {
  const seed = await existingSeed(kind);
  if (!seed) throw new Error(`${kind}: no data set; run npm run bench:prices-seed`);
  const db = await openBenchDb(kind);
  try {
    const ds = await loadDataset(db);
    const productId = ds.productIds[n % ds.productIds.length]!;
    let q: { text: string; values: unknown[] };
    if (what === 'trends') q = trendsQuery(ds.accountId, productId);
    else {
      const range = historyRange({ interval: 'day', from: seed.startAt, to: seed.endAt });
      if (range.interval === 'raw') throw new Error('interval=day expected');
      q = historyQuery({ ...range, interval: range.interval, productId, accountId: ds.accountId });
    }
    const r = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${q.text}`, q.values);
    console.log(`-- ${kind} ${what} product ${productId}\n${r.rows.map((x) => x['QUERY PLAN']).join('\n')}`);
  } finally {
    await db.close();
  }
}
