import pg from 'pg';
import { PRICES_PG_DB } from './prices-data.js';

/** A product of the `bench:prices` database, as the trends A/B benches read it. */
export type AbProduct = { id: string; account_id: string };

/**
 * The set-up the trends A/B benches share: a connection to the `bench:prices` database configured
 * as the service's pool, and 2 x N products (env N, default 80) starting at OFF (3200) by id.
 */
export async function openTrendsAb(): Promise<{ c: pg.Client; products: AbProduct[] }> {
  const c = new pg.Client({
    connectionString: `postgres://postgres@127.0.0.1:5432/${PRICES_PG_DB}`,
    // As the service's pool (src/db/postgres.ts): JIT compiles this statement on every run otherwise.
    options: '-c jit=off',
  });
  await c.connect();
  const n = Number(process.env.N ?? 80);
  const off = Number(process.env.OFF ?? 3200);
  const products = (
    await c.query<AbProduct>(`select id, account_id from products order by id offset $1 limit $2`, [off, n * 2])
  ).rows;
  return { c, products };
}
