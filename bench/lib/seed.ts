import pg from 'pg';
import { createKey } from '../../src/auth/keys.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';

export const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const PG_BENCH_DB = process.env.BENCH_PG_DB ?? 'ph_bench';
export const pgUrl = (db = PG_BENCH_DB) => PG_ADMIN_URL.replace(/\/[^/]*$/, `/${db}`);
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The word the heavy list query searches for: in 1 product of 1000, so `limit=100` scans everything. */
export const NEEDLE = 'needle';

export interface Seeded {
  /** The account the point GETs read; one key per load connection. */
  accountId: string;
  keys: string[];
  productIds: string[];
  /** A second account with many products, for the heavy list query. */
  heavyKey: string;
  heavyCount: number;
}

/** Drops and recreates the benchmark database (it belongs to the benchmark alone). */
export async function recreatePgDatabase(name = PG_BENCH_DB): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(`drop database if exists ${name} with (force)`);
    await c.query(`create database ${name}`);
  } finally {
    await c.end();
  }
}

const BRANDS = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka'];
const CATEGORIES = ['audio', 'video', 'kitchen', 'garden', 'tools', 'toys', 'books', 'sports'];

async function insertProducts(db: Database, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 5_000) {
    const n = Math.min(5_000, count - start);
    const cols: unknown[][] = [[], [], [], [], [], [], [], [], []];
    for (let j = 0; j < n; j++) {
      const i = start + j;
      const id = newId('prod');
      ids.push(id);
      const row = [
        id,
        `Product ${i} ${BRANDS[i % 8]} ${CATEGORIES[(i >> 3) % 8]} model ${(i * 7919) % 100_000}`,
        BRANDS[i % 8],
        `SKU-${accountId.slice(-6)}-${i}`,
        CATEGORIES[(i >> 3) % 8],
        `A ${CATEGORIES[(i >> 3) % 8]} product from ${BRANDS[i % 8]}, item number ${i}, with a description of ordinary length${i % 1000 === 0 ? ` and the word ${NEEDLE}` : ''}.`,
        ((i * 7919) % 100_000) / 100 + 0.99,
        'USD',
        `https://shop.example/p/${i}`,
      ];
      row.forEach((v, k) => cols[k]!.push(v));
    }
    await db.query(
      `insert into products (account_id, id, name, brand, sku, category, description, base_price, currency, url)
       select $1, u.* from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                                  $8::numeric[], $9::text[], $10::text[]) as u`,
      [accountId, ...cols],
    );
  }
  return ids;
}

/**
 * Migrates and fills a database through the project's own code: keys via createKey (business
 * plan, 100000 requests/hour each), products via one SQL insert per 5000.
 */
export async function seed(
  target: { databaseUrl?: string; dataDir?: string },
  opts: { keys: number; products: number; heavyProducts: number },
): Promise<Seeded> {
  const db = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir ?? '' });
  try {
    await migrate(db);
    const first = await createKey(db, { plan: 'business', name: 'bench-0' });
    const keys = [first.key];
    for (let i = 1; i < opts.keys; i++) {
      keys.push((await createKey(db, { plan: 'business', name: `bench-${i}`, accountId: first.account_id })).key);
    }
    const productIds = await insertProducts(db, first.account_id, opts.products);
    const heavy = await createKey(db, { plan: 'business', name: 'bench-heavy' });
    await insertProducts(db, heavy.account_id, opts.heavyProducts);
    await db.query('analyze');
    return { accountId: first.account_id, keys, productIds, heavyKey: heavy.key, heavyCount: opts.heavyProducts };
  } finally {
    await db.close();
  }
}
