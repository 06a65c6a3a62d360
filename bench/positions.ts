/**
 * `npm run bench:positions`: the 20 most undercut of 100 000 products (10 competitors each),
 * GET /api/v1/positions, on PostgreSQL (issue 25: p95 <= 50 ms). Seeds database
 * ph_bench_positions (dropped and recreated) with SQL generate_series directly: the products,
 * 10 competitors, and one observation per product per competitor (1 000 000) plus our own price
 * for one product in eight, inserted as any writer inserts them (so the triggers of
 * migrations/0012 keep product_positions, and the seed also times that upkeep). Then starts the
 * real server and times each query, one request at a time after a warm-up, in ROUNDS rounds
 * (the spread is that of the rounds' p95).
 *
 * Env: BENCH_POSITIONS_PRODUCTS (100000), BENCH_POSITIONS_COMPETITORS (10),
 * BENCH_POSITIONS_REQUESTS (200 per round), BENCH_POSITIONS_ROUNDS (3), BENCH_POSITIONS_PG_DB,
 * BENCH_DB=pg (PGlite: BENCH_DB=pglite, not part of the target).
 * Writes bench/results/positions.json.
 */
import http from 'node:http';
import path from 'node:path';
import { createKey } from '../src/auth/keys.js';
import { migrate } from '../src/db/migrate.js';
import { openDatabase } from '../src/db/open.js';
import { cleanup, DATABASES, env, machine, realServerArgs, table, workDir, writeResult } from './lib/common.js';
import { percentile } from './lib/load.js';
import { startServer, track } from './lib/proc.js';
import { pgUrl, recreatePgDatabase, REDIS_URL } from './lib/seed.js';

const PRODUCTS = env('BENCH_POSITIONS_PRODUCTS', 100_000);
const COMPETITORS = env('BENCH_POSITIONS_COMPETITORS', 10);
const REQUESTS = env('BENCH_POSITIONS_REQUESTS', 200);
const ROUNDS = env('BENCH_POSITIONS_ROUNDS', 3);
const PG_DB = process.env.BENCH_POSITIONS_PG_DB ?? 'ph_bench_positions';
const CHUNK = 10_000;
/** Products per observation statement (x competitors rows): big enough to amortise the triggers' scans of price_series. */
const OBS_CHUNK = 5_000;
const LABEL = { pg: 'PostgreSQL', pglite: 'PGlite' } as const;
const r2 = (n: number) => Math.round(n * 100) / 100;

async function seedPositions(target: { databaseUrl?: string; dataDir?: string }) {
  const db = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir ?? '' });
  const t0 = performance.now();
  const seconds: Record<string, number> = {};
  const lap = (name: string, since: number) => (seconds[name] = r2((performance.now() - since) / 1000));
  try {
    await migrate(db);
    const key = await createKey(db, { plan: 'business', name: 'bench-positions' });
    const account = key.account_id;
    let t = performance.now();
    await db.query(
      `/* benchCompetitors */
       insert into competitors (id, account_id, name, website, domain)
       select 'comp_bench' || lpad(g::text, 4, '0'), $1, 'Rival ' || g, 'https://rival' || g || '.example', 'rival' || g || '.example'
         from generate_series(1, $2::int) g`,
      [account, COMPETITORS],
    );
    // Products in chunks (each statement's trigger stores its products' positions).
    for (let start = 0; start < PRODUCTS; start += CHUNK) {
      await db.query(
        `/* benchProducts */
         insert into products (id, account_id, name, brand, sku, category, base_price, currency)
         select 'prod_bench' || lpad(g::text, 7, '0'), $1, 'Product ' || g, 'Brand ' || (g % 20), 'SKU-' || g, 'Category ' || (g % 50),
                round((10 + (g * 7919 % 9000) / 100.0)::numeric, 2), 'EUR'
           from generate_series($2::int, $3::int) g`,
        [account, start + 1, Math.min(PRODUCTS, start + CHUNK)],
      );
    }
    lap('products', t);
    // Competitors' prices: around our base price, -30 % to +30 %, one in 32 out of stock;
    // our own observed price for one product in eight.
    t = performance.now();
    for (let start = 0; start < PRODUCTS; start += OBS_CHUNK) {
      const chunk = performance.now();
      await db.query(
        `/* benchObservations */
         insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
         select $1, p.id, c.id,
                round(p.base_price * (0.7 + ((hashtext(p.id || c.id) & 1023) / 1023.0) * 0.6), 2), 'EUR',
                (hashtext(c.id || p.id) & 31) <> 0, now() - interval '1 hour', 'api'
           from products p
          cross join (select id from competitors where account_id = $1) c
          where p.account_id = $1 and p.id between 'prod_bench' || lpad($2::text, 7, '0') and 'prod_bench' || lpad($3::text, 7, '0')
          order by p.id, c.id`,
        [account, start + 1, Math.min(PRODUCTS, start + OBS_CHUNK)],
      );
      if (start === 0)
        console.log(`  first ${OBS_CHUNK * COMPETITORS} observations in ${r2((performance.now() - chunk) / 1000)} s`);
    }
    await db.query(
      `/* benchOwnPrices */
       insert into price_observations (account_id, product_id, competitor_id, price, currency, in_stock, observed_at, source)
       select $1, p.id, null, round(p.base_price * 0.95, 2), 'EUR', true, now() - interval '30 minutes', 'api'
         from products p where p.account_id = $1 and (hashtext(p.id) & 7) = 0
        order by p.id`,
      [account],
    );
    lap('observations_and_positions', t);
    await db.query('analyze');
    const counts = (
      await db.query<{ observations: string | number; ranked: string | number; undercut: string | number }>(
        `/* benchCounts */
         select (select count(*) from price_observations where account_id = $1) as observations,
                count(*) filter (where rank is not null) as ranked, count(*) filter (where rank > 1) as undercut
           from product_positions where account_id = $1`,
        [account],
      )
    ).rows[0]!;
    lap('total', t0);
    return {
      key: key.key,
      account,
      seconds,
      counts: {
        observations: Number(counts.observations),
        ranked: Number(counts.ranked),
        undercut: Number(counts.undercut),
      },
    };
  } finally {
    await db.close();
  }
}

/** `n` requests one after another (a closed loop of one), each timed to the end of its body. */
async function timeRequests(
  url: string,
  pathName: string,
  headers: Record<string, string>,
  n: number,
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: target.hostname, port: target.port, path: pathName, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200)
            reject(new Error(`${pathName}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          else resolve();
        });
      });
      req.on('error', reject);
    });
    lat.push(performance.now() - t0);
  }
  agent.destroy();
  return lat;
}

const stats = (lat: number[]) => {
  const s = Float64Array.from(lat).sort();
  return {
    p50: r2(percentile(s, 50)),
    p95: r2(percentile(s, 95)),
    p99: r2(percentile(s, 99)),
    max: r2(s[s.length - 1] ?? 0),
  };
};

const dir = workDir('positions');
const out: Record<string, unknown> = {};
const rows: Record<string, string | number>[] = [];
try {
  console.log(
    `bench:positions  ${PRODUCTS.toLocaleString('en')} products x ${COMPETITORS} competitors, ${ROUNDS} rounds of ${REQUESTS} requests per query`,
  );
  // PostgreSQL unless BENCH_DB says otherwise: the target is PostgreSQL's.
  for (const kind of process.env.BENCH_DB ? DATABASES : (['pg'] as const)) {
    const dataDir = path.join(dir, `data-${kind}`);
    if (kind === 'pg') await recreatePgDatabase(PG_DB);
    const seeded = await seedPositions(kind === 'pg' ? { databaseUrl: pgUrl(PG_DB) } : { dataDir });
    console.log(
      `${LABEL[kind]}: seeded in ${seeded.seconds.total} s ${JSON.stringify(seeded.seconds)}; ${JSON.stringify(seeded.counts)}`,
    );
    const server = track(
      await startServer({
        name: `positions-${kind}`,
        args: realServerArgs(),
        env:
          kind === 'pg'
            ? { DATABASE_URL: pgUrl(PG_DB), REDIS_URL, REDIS_PREFIX: `pricehound-bench-${Date.now()}:` }
            : { DATA_DIR: dataDir },
        logFile: path.join(dir, `positions-${kind}.log`),
      }),
    );
    try {
      const headers = { authorization: `Bearer ${seeded.key}` };
      const queries: Record<string, string> = {
        '20 most undercut': '/api/v1/positions?undercut=true&sort=-gap_percent&limit=20',
        'default sort (-gap_percent)': '/api/v1/positions',
        'by one competitor': '/api/v1/positions?competitor_id=comp_bench0003&sort=-gap_percent&limit=20',
        'largest gap amount': '/api/v1/positions?sort=-gap_amount&limit=20',
        'gap 10-20 %, page 2': '',
        summary: '/api/v1/positions/summary',
      };
      // A second page: the cursor of the first.
      const first = await fetch(`${server.url}/api/v1/positions?gap_percent_min=10&gap_percent_max=20&limit=20`, {
        headers,
      });
      const cursor = ((await first.json()) as { pagination: { next_cursor: string } }).pagination.next_cursor;
      queries['gap 10-20 %, page 2'] =
        `/api/v1/positions?gap_percent_min=10&gap_percent_max=20&limit=20&cursor=${cursor}`;
      const result: Record<string, unknown> = {};
      for (const [name, q] of Object.entries(queries)) {
        await timeRequests(server.url, q, headers, 20);
        const perRound = [];
        const all: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const lat = await timeRequests(
            server.url,
            q,
            headers,
            name === 'summary' ? Math.min(REQUESTS, 50) : REQUESTS,
          );
          perRound.push(stats(lat));
          all.push(...lat);
        }
        const total = stats(all);
        const p95s = perRound.map((s) => s.p95);
        result[name] = { path: q, ...total, rounds: perRound };
        rows.push({
          database: LABEL[kind],
          query: name,
          'p50 ms': total.p50,
          'p95 ms': total.p95,
          'p95 spread (rounds)': `${Math.min(...p95s)}-${Math.max(...p95s)}`,
          'p99 ms': total.p99,
          'max ms': total.max,
        });
      }
      out[LABEL[kind]] = { seed: { seconds: seeded.seconds, ...seeded.counts }, queries: result };
    } finally {
      await server.stop();
    }
  }
  table(rows);
  writeResult(process.env.BENCH_RESULT_NAME ?? 'positions', {
    machine: machine(),
    products: PRODUCTS,
    competitors: COMPETITORS,
    requestsPerRound: REQUESTS,
    rounds: ROUNDS,
    target: { query: '20 most undercut', database: 'PostgreSQL', p95Ms: 50 },
    results: out,
  });
} finally {
  cleanup(dir);
}
