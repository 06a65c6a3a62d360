import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * Where an in-process benchmark keeps its data: a fresh schema of DATABASE_URL (dropped after),
 * or without it embedded PGlite in a temporary directory (removed after). `env` is what to pass
 * to loadConfig.
 */
export async function benchStorage(name: string): Promise<{ env: Record<string, string>; kind: 'pglite' | 'postgres'; done: () => Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ph-bench-${name}-`));
    return { kind: 'pglite', env: { DATA_DIR: dir }, done: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    kind: 'postgres',
    env: { DATABASE_URL: url.toString() },
    done: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}
