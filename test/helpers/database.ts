import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * Where a test file's data lives. With DATABASE_URL set (CI's second pass), a database of its own
 * on that server, cloned from the migrated template scripts/run-tests.mjs made
 * (scripts/pg-template.mjs; ~0.05 CPU-s of the server against ~0.7 for migrating a fresh
 * one), dropped afterwards; otherwise a fresh PGlite DATA_DIR copied from the template it prepared
 * (opening a copy takes ~0.4 s, creating one ~4 s). `migrated: false` starts from an empty
 * database instead, for the tests of migrating one.
 */
export interface TestStorage {
  env: Record<string, string>;
  kind: 'pglite' | 'postgres';
  cleanup(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

export async function testStorage(opts: { migrated?: boolean } = {}): Promise<TestStorage> {
  const migrated = opts.migrated ?? true;
  const base = process.env.DATABASE_URL;
  const suffix = crypto.randomBytes(5).toString('hex');
  const redis: Record<string, string> = process.env.REDIS_URL
    ? { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: `phtest:${suffix}:` }
    : {};
  if (base) {
    const url = new URL(base);
    // The runner's run (scripts/pg-template.mjs): its template, and a name it drops if left behind.
    // Without it (a file run by node --test directly) an empty database, which the app migrates.
    const run = process.env.PRICEHOUND_TEST_PG_RUN;
    const name = `${run ?? `${databaseOf(base)}_t`}_${suffix}`;
    const template = migrated && run ? `${run}_tpl` : 'template0';
    await onServer(base, (c) =>
      c.query(`create database ${c.escapeIdentifier(name)} template ${c.escapeIdentifier(template)}`),
    );
    url.pathname = `/${name}`;
    return {
      kind: 'postgres',
      env: { DATABASE_URL: url.toString(), ...redis },
      async cleanup() {
        await onServer(base, (c) => c.query(`drop database if exists ${c.escapeIdentifier(name)} with (force)`));
      },
    };
  }
  // The runner's tmpfs directory (scripts/test-data-root.mjs): the copy costs a tenth there.
  const root = process.env.PRICEHOUND_TEST_DATA_ROOT;
  const dir = fs.mkdtempSync(path.join(root && fs.existsSync(root) ? root : os.tmpdir(), 'ph-test-'));
  const template = process.env.PRICEHOUND_TEST_TEMPLATE;
  if (migrated && template && fs.existsSync(template))
    fs.cpSync(template, path.join(dir, 'pgdata'), { recursive: true });
  return {
    kind: 'pglite',
    // A small buffer cache: the engine clears all of it at every start (src/db/pglite-worker.ts),
    // and the suite starts hundreds; no test's data needs more.
    env: { DATA_DIR: dir, EMBEDDED_SHARED_BUFFERS_MB: '16', ...redis },
    async cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
}

async function onServer<T>(base: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}
