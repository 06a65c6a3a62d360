import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './types.js';

/** migrations/ sits two levels above this file both in src/db and in dist/db. */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ id: Number(f.slice(0, 4)), name: f, sql: fs.readFileSync(path.join(dir, f), 'utf8') }));
}

// Any constant works; it only has to be the same for every pricehound process.
const MIGRATION_LOCK = 7_245_101;

/**
 * Applies pending migrations in one transaction under an advisory lock, so concurrent starters
 * (several API or worker processes) wait for each other and each migration runs exactly once.
 * Returns the names applied.
 */
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`create table if not exists pricehound_migrations (
      id integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set((await tx.query<{ id: number }>('select id from pricehound_migrations')).rows.map((r) => r.id));
    const latestKnown = Math.max(0, ...migrations.map((m) => m.id));
    const unknown = [...done].filter((id) => id > latestKnown);
    if (unknown.length > 0) {
      throw new Error(`the database has migration ${Math.max(...unknown)}, newer than this version of pricehound knows`);
    }
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.query('insert into pricehound_migrations (id, name) values ($1, $2)', [m.id, m.name]);
      await tx.exec(m.sql);
      applied.push(m.name);
    }
    return applied;
  });
}
