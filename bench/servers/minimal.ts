/**
 * The two reference servers of `npm run bench:api`, each run in its own process:
 *   MODE=bare    GET /api/v1/products/:id answers a constant product-sized JSON object: the
 *                HTTP ceiling (Fastify, no hooks, no logging).
 *   MODE=pg      the same route runs the API's SELECT through a pg Pool (same pool size, type
 *                parsers and prepared statement as src/db/postgres.ts): the floor PostgreSQL
 *                sets. PREPARED=0 sends it unnamed (parsed and planned every time).
 *   MODE=pglite  the same SELECT through PGlite opened on the API's DATA_DIR (the API must be
 *                stopped: PGlite is single-process): the floor the embedded engine sets.
 * Env: PORT, HOST, MODE, ACCOUNT_ID, DATABASE_URL (pg), DATA_DIR (pglite), DATABASE_POOL_SIZE.
 * GET /readyz answers 200 once the database answers.
 */
import path from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import Fastify from 'fastify';
import pg from 'pg';
import { PreparedStatements } from '../../src/db/pglite-prepared.js';
import { PRODUCT_BY_ID_SQL } from '../../src/products/sql.js';

const mode = process.env.MODE ?? 'bare';
const accountId = process.env.ACCOUNT_ID ?? '';
// The API's own statement for GET /products/{id}: the product with its monitoring summary and
// position (listings, price_series and exchange_rates probes), so b is the floor the database
// sets for exactly the work a pays for.
const SQL = PRODUCT_BY_ID_SQL;

type Select = (id: string) => Promise<Record<string, unknown> | undefined>;
let select: Select | undefined;
let close = async () => {};

if (mode === 'pg') {
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
    types: {
      getTypeParser(oid: number, format?: 'text' | 'binary') {
        if (oid === 20) return (v: string) => Number(v);
        if (oid === 1700) return (v: string) => v;
        return pg.types.getTypeParser(oid, format);
      },
    },
  });
  // Like src/db/postgres.ts, a named (prepared) statement unless PREPARED=0.
  const prepared = process.env.PREPARED !== '0';
  select = async (id) =>
    (
      await pool.query(
        prepared ? { name: 'get_product', text: SQL, values: [id, accountId] } : { text: SQL, values: [id, accountId] },
      )
    ).rows[0] as Record<string, unknown> | undefined;
  close = () => pool.end();
} else if (mode === 'pglite') {
  const db = await PGlite.create(path.join(process.env.DATA_DIR ?? './data', 'pgdata'), {
    parsers: { [types.INT8]: (v: string) => Number(v), [types.NUMERIC]: (v: string) => v },
  });
  // Prepared, as the API's driver does (src/db/pglite-prepared.ts), so b measures the same work.
  const prepared = new PreparedStatements(db);
  select = async (id) =>
    (await prepared.query(SQL, [id, accountId], false)).rows[0] as Record<string, unknown> | undefined;
  close = () => db.close();
} else if (mode !== 'bare') {
  throw new Error(`MODE must be bare, pg or pglite, not ${mode}`);
}

const CONSTANT = {
  id: 'prod_0000000000aaaaaaaaaaaaaaaa',
  object: 'product',
  name: 'Product 1 Globex audio model 7919',
  brand: 'Globex',
  sku: 'SKU-000000-1',
  category: 'audio',
  description: 'A audio product from Globex, item number 1, with a description of ordinary length.',
  base_price: 80.18,
  currency: 'USD',
  url: 'https://shop.example/p/1',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/api/v1/products/:id', async (request, reply) => {
  if (!select) return CONSTANT;
  const row = await select(request.params.id);
  if (!row) return reply.code(404).send({ error: 'not found' });
  return row;
});
app.get('/readyz', async () => {
  if (mode !== 'bare') await select!('prod_none');
  return { status: 'ok' };
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.once(sig, () => {
    void app
      .close()
      .then(close)
      .finally(() => process.exit(0));
  });
}
