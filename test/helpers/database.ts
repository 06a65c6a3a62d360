import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * Where a test file's data lives. With DATABASE_URL set (CI's second pass), a fresh schema in
 * that database, dropped afterwards; otherwise a fresh PGlite DATA_DIR copied from the template
 * scripts/run-tests.mjs prepared (opening a copy takes ~0.4 s, creating one ~4 s).
 */
export interface TestStorage {
  env: Record<string, string>;
  kind: 'pglite' | 'postgres';
  cleanup(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

export async function testStorage(): Promise<TestStorage> {
  const base = process.env.DATABASE_URL;
  const suffix = crypto.randomBytes(5).toString('hex');
  const redis: Record<string, string> = process.env.REDIS_URL
    ? { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: `phtest:${suffix}:` }
    : {};
  if (base) {
    const schema = `t_${suffix}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(base);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return {
      kind: 'postgres',
      env: { DATABASE_URL: url.toString(), ...redis },
      async cleanup() {
        const c = new pg.Client({ connectionString: base });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-test-'));
  const template = process.env.PRICEHOUND_TEST_TEMPLATE;
  if (template && fs.existsSync(template)) fs.cpSync(template, path.join(dir, 'pgdata'), { recursive: true });
  return {
    kind: 'pglite',
    env: { DATA_DIR: dir, ...redis },
    async cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
