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
    await tx.query('/* lockMigrations */ select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`/* createMigrationLedger */ create table if not exists pricehound_migrations (
      id integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`);
    const ledger = (
      await tx.query<{ id: number; name: string }>(
        '/* readMigrationLedger */ select id, name from pricehound_migrations order by id',
      )
    ).rows;
    refuseForeignLedger(ledger, migrations);
    const done = new Set(ledger.map((r) => Number(r.id)));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.query('/* recordMigration */ insert into pricehound_migrations (id, name) values ($1, $2)', [
        m.id,
        m.name,
      ]);
      await tx.exec(m.sql);
      applied.push(m.name);
    }
    return applied;
  });
}

/**
 * The ledger is keyed by number and checked by name: a database whose migration N was applied
 * from another file (renamed, swapped, or from a branch that reused the number) is refused
 * before anything runs, as is one with a migration newer than this version knows. Both mean
 * the schema is not the one this code was written against.
 */
export function refuseForeignLedger(ledger: { id: number; name: string }[], migrations: Migration[]): void {
  const known = new Map(migrations.map((m) => [m.id, m.name]));
  const latestKnown = Math.max(0, ...migrations.map((m) => m.id));
  const newer = ledger.filter((r) => Number(r.id) > latestKnown);
  if (newer.length > 0) {
    const last = newer[newer.length - 1]!;
    throw new Error(
      `the database has migration ${Number(last.id)} (${last.name}), newer than this version of pricehound knows`,
    );
  }
  for (const row of ledger) {
    const expected = known.get(Number(row.id));
    if (expected === undefined) {
      throw new Error(
        `the database has migration ${row.name}, which this version of pricehound does not have (migrations/ has no ${String(row.id).padStart(4, '0')}_*.sql)`,
      );
    }
    if (expected !== row.name) {
      throw new Error(
        `migration ${String(row.id).padStart(4, '0')} was applied as ${row.name} but this version of pricehound has ${expected}: ` +
          'the file was renamed or another one took its number; restore the name it was applied under (or give the new file a new number)',
      );
    }
  }
}
