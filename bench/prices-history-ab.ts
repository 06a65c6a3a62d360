// `BENCH_PRICES_PG_DB=<seeded db> BENCH_SERVER_A=<other build's dist/cli/main.js> node --import tsx bench/prices-history-ab.ts`
// A year of daily history (GET /products/{id}/prices?interval=day over the seed's whole range,
// UTC) through two real servers side by side on the same data set (`npm run bench:prices-seed`
// with the same BENCH_PRICES_* settings): A (BENCH_SERVER_A, e.g. a build of main kept outside
// the tree) and B (BENCH_SERVER_B, default this tree's dist/cli/main.js), one request in flight,
// ROUNDS rounds of N requests on each, the order swapped every round. Per server: wall p50/p95
// over every request, and per round the CPU per request of the server process and of the
// database's backends (from /proc, 10 ms ticks). Every answer of B is checked byte for byte,
// with its content type and ETag, against A's. BENCH_DB=pglite: one server at a time on
// BENCH_PRICES_DIR's data (the embedded database has one owner), no PostgreSQL CPU.
// AB_PRODUCTS=each: every measured request reads a product no request of either server read
// before (the first product still checks the answers), so both read cold as a product nobody
// asked for lately is read; the default reads the first product every time (warm).
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { createKey } from '../src/auth/keys.js';
import { env, realServerArgs, REAL_SERVER, workDir } from './lib/common.js';
import { percentile } from './lib/load.js';
import {
  ACCOUNT_NAME,
  existingSeed,
  type Kind,
  loadDataset,
  openBenchDb,
  PGLITE_DATA_DIR,
  PRICES_PG_DB,
} from './lib/prices-data.js';
import { cpuDuring, type Server, startServer, track } from './lib/proc.js';
import { pgUrl, REDIS_URL } from './lib/seed.js';

const kind = (process.env.BENCH_DB ?? 'pg') as Kind;
const ROUNDS = env('ROUNDS', 6);
const N = env('N', 30);
const servers = { A: process.env.BENCH_SERVER_A!, B: process.env.BENCH_SERVER_B ?? REAL_SERVER };
if (!servers.A) throw new Error('BENCH_SERVER_A: the build to compare with');
const seed = await existingSeed(kind);
if (!seed) throw new Error('no data set with these BENCH_PRICES_* settings: run `npm run bench:prices-seed` first');
const db = await openBenchDb(kind);
const ds = await loadDataset(db);
const { key } = await createKey(db, { plan: 'business', name: ACCOUNT_NAME, accountId: ds.accountId });
await db.close();
const dir = workDir('prices-history-ab');
const start = async (name: 'A' | 'B') =>
  track(
    await startServer({
      name,
      args: realServerArgs(`history-ab-${name}`, servers[name]),
      env:
        kind === 'pg'
          ? { DATABASE_URL: pgUrl(PRICES_PG_DB), REDIS_URL, REDIS_PREFIX: `pricehound-bench-hab-${process.pid}:` }
          : { DATA_DIR: PGLITE_DATA_DIR, DATABASE_URL: '' },
      logFile: path.join(dir, `server-${name}.log`),
      timeoutMs: 300_000,
    }),
  );
const urlOf = (productId: string) =>
  `/api/v1/products/${productId}/prices?interval=day&from=${encodeURIComponent(seed.startAt)}&to=${encodeURIComponent(seed.endAt)}`;
const EACH = process.env.AB_PRODUCTS === 'each';
let taken = 0;
/** The product of the next measured request: always the first, or with AB_PRODUCTS=each one not read yet. */
const nextProduct = () => {
  if (!EACH) return ds.productIds[0]!;
  if (++taken >= ds.productIds.length) throw new Error('AB_PRODUCTS=each: more requests than products');
  return ds.productIds[(taken * 7919) % ds.productIds.length]!;
};
const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
const get = async (pool: Pool, productId = ds.productIds[0]!) => {
  const r = await pool.request({ method: 'GET', path: urlOf(productId), headers });
  const body = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${body.slice(0, 300)}`);
  return { body, type: r.headers['content-type'], etag: r.headers.etag };
};
const out = {
  A: { wall: [] as number[], server: [] as number[], pg: [] as number[] },
  B: { wall: [] as number[], server: [] as number[], pg: [] as number[] },
};
let reference: string | undefined;
let compared = 0;
const running: Partial<Record<'A' | 'B', { s: Server; pool: Pool }>> = {};
const open = async (name: 'A' | 'B') => {
  const s = await start(name);
  const pool = new Pool(s.url, { connections: 1, pipelining: 1 });
  for (let i = 0; i < 10; i++) await get(pool); // warm up: JIT, prepared statements, generic plans
  return (running[name] = { s, pool });
};
const load1: number[] = [];
if (kind === 'pg') for (const name of ['A', 'B'] as const) await open(name);
for (let round = 0; round < ROUNDS; round++) {
  for (const name of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
    const { s, pool } = running[name] ?? (await open(name));
    const first = await get(pool);
    const answer = JSON.stringify(first);
    if (reference === undefined) reference = answer;
    else if (answer !== reference) throw new Error(`${name}'s answer differs (round ${round + 1})`);
    compared++;
    const { cpu } = await cpuDuring(s.pid, kind === 'pg' ? PRICES_PG_DB : undefined, async () => {
      for (let i = 0; i < N; i++) {
        const product = nextProduct();
        const t = performance.now();
        await get(pool, product);
        out[name].wall.push(performance.now() - t);
      }
    });
    out[name].server.push(cpu.server / N);
    out[name].pg.push(cpu.postgres / N);
    if (kind === 'pglite') {
      await pool.close();
      await s.stop();
      delete running[name];
    }
  }
  load1.push(os.loadavg()[0]!);
}
for (const r of Object.values(running)) {
  await r.pool.close();
  await r.s.stop();
}
const f = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' ');
console.log(
  `${kind}: ${seed.observations} observations; answer ${JSON.parse(reference!).body.length} bytes, equal in all ${compared} checks`,
);
for (const [name, o] of Object.entries(out)) {
  const sorted = Float64Array.from(o.wall).sort();
  console.log(
    `${name} (${servers[name as 'A']}): wall p50 ${percentile(sorted, 50).toFixed(1)} p95 ${percentile(sorted, 95).toFixed(1)} ms over ${o.wall.length};` +
      ` CPU ms/request per round: server ${f(o.server)} | PostgreSQL ${f(o.pg)}`,
  );
}
console.log(`load1 per round: ${f(load1)}`);
