/**
 * Populated databases of an earlier schema version, for the migration tests
 * (test/db/*-migration.test.ts): each builds a database migrated up to the migration it tests,
 * fills it as that version would have, then migrates it to the latest and checks that no row
 * was lost or duplicated, on the suite's engine (PGlite, or PostgreSQL with DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../../../src/config.js';
import { migrate, readMigrations } from '../../../src/db/migrate.js';
import { openDatabase } from '../../../src/db/open.js';
import type { Database, Queryable } from '../../../src/db/types.js';
import { testStorage, type TestStorage, usingPostgres } from '../../helpers/database.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface EarlierDatabase {
  storage: TestStorage;
  /** Opens the database (PGlite: one opening at a time). */
  open(): Promise<Database>;
  /** Opens the database, runs `fn` on it and closes it again. */
  withDb<R>(fn: (db: Database) => Promise<R>): Promise<R>;
  cleanup(): Promise<void>;
}

/** The migrations up to and including `id`. */
export const migrationsThrough = (id: number) => readMigrations().filter((m) => m.id <= id);

/** What migrating a database at migration `id` to the latest applies, by name. */
export const namesAfter = (id: number) =>
  readMigrations()
    .filter((m) => m.id > id)
    .map((m) => m.name);

/**
 * A new database (a new PGlite DATA_DIR, or a new database on DATABASE_URL's server) migrated from empty up
 * to, not including, migration `id`, then given its rows by `populate`. Closed afterwards, or with
 * `keepOpen` returned open as `db` (closed by `cleanup`): each opening of PGlite costs ~2 CPU-s.
 */
export async function databaseBefore(
  id: number,
  populate: (db: Database) => Promise<void>,
  opts: { keepOpen?: boolean } = {},
): Promise<EarlierDatabase & { db?: Database }> {
  // PostgreSQL: an empty database (a copy of template0). PGlite: a copy of the migrated template,
  // emptied below, since an empty DATA_DIR means creating a cluster.
  const storage = await testStorage({ migrated: !usingPostgres() });
  const open = () => openDatabase(loadConfig(storage.env));
  const withDb = async <R>(fn: (db: Database) => Promise<R>): Promise<R> => {
    const db = await open();
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  let db: Database | undefined;
  try {
    db = await open();
    // PGlite: the copy of the suite's template is migrated to the latest; emptied as initdb
    // leaves a database (the migrations create everything in public, nothing outside it),
    // which takes a fraction of the ~10 CPU-s of creating a cluster.
    if (storage.kind === 'pglite' && (await appliedIds(db).catch(() => [])).length > 0) {
      await db.exec(`drop schema public cascade;
        create schema public authorization pg_database_owner;
        grant usage on schema public to public;
        comment on schema public is 'standard public schema'`);
      const left = await db.query<{ n: number }>(
        `select (select count(*) from pg_class where relnamespace = 'public'::regnamespace)
              + (select count(*) from pg_proc where pronamespace = 'public'::regnamespace)
              + (select count(*) from pg_type where typnamespace = 'public'::regnamespace) as n`,
      );
      assert.equal(Number(left.rows[0]!.n), 0, 'nothing of the migrations is left');
    }
    await migrate(
      db,
      readMigrations().filter((m) => m.id < id),
    );
    await populate(db);
    if (!opts.keepOpen) {
      await db.close();
      db = undefined;
    }
  } catch (err) {
    await db?.close().catch(() => undefined);
    await storage.cleanup();
    throw err;
  }
  const kept = db;
  const cleanup = async () => {
    await kept?.close();
    await storage.cleanup();
  };
  return { storage, open, withDb, cleanup, db: kept };
}

/** Products and competitors of `accountId`, as the earlier schemas take them, for observations to refer to. */
export async function addProductsAndRivals(db: Queryable, accountId: string, products: string[], rivals: string[]) {
  for (const id of products) {
    await db.query(
      `insert into products (id, account_id, name, base_price, currency) values ($1, $2, 'Kettle', 40, 'EUR')`,
      [id, accountId],
    );
  }
  for (const id of rivals) {
    await db.query(
      `insert into competitors (id, account_id, name, website, domain) values ($1, $2, 'Rival', 'https://rival.example', 'rival.example')`,
      [id, accountId],
    );
  }
}

/** The ids of the migrations the database's ledger holds. */
export const appliedIds = async (db: Queryable) =>
  (await db.query<{ id: number }>('select id from pricehound_migrations order by id')).rows.map((r) => Number(r.id));

/** pg_class.relkind of `table`: 'r' a plain table, 'p' a partitioned one. */
export const relkind = async (db: Queryable, table: string) =>
  (await db.query<{ relkind: string }>(`select relkind::text from pg_class where oid = to_regclass($1)`, [table]))
    .rows[0]?.relkind;

/** The partitions of `parent` by name, each with the number of rows it holds. */
export async function partitionRows(db: Queryable, parent: string): Promise<Map<string, number>> {
  const parts = await db.query<{ name: string; n: number }>(
    `select c.relname as name, (select count(*)::int from ${parent} x where x.tableoid = c.oid) as n
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass($1) order by 1`,
    [parent],
  );
  return new Map(parts.rows.map((r) => [r.name, Number(r.n)]));
}

/** What showed that the killed migration was under way when it was killed. */
export interface KillEvidence {
  /** PostgreSQL: the pid of the migration's backend; PGlite: none. */
  backend?: number;
  /** In words, for the test's output. */
  seen: string;
}

/**
 * Starts a process that applies every pending migration to `db` (as a server's start does) and
 * kills it with SIGKILL in the middle: only once the migration has been seen writing, never on a
 * timer. The caller then asserts from the ledger and the tables that it had not finished.
 *
 * - PostgreSQL: this test holds the row of `accountId` (FOR UPDATE) in a transaction of its own.
 *   The migration's first copy into a new table checks each row's foreign key to accounts
 *   (FOR KEY SHARE) at the end of that statement, so it waits there, with every row of that
 *   statement written and nothing committed. The process is killed while its backend is seen
 *   waiting on this test and holding `table` (the one the migration moves, renamed by then) in
 *   ACCESS EXCLUSIVE mode. The lock is then let go: the backend runs the rest of the statements
 *   it was sent, finds no client to answer and rolls back, as it would after any crash of the
 *   client; this returns once it has (it held `table` until then).
 * - PGlite (the engine runs in the migrating process): the process is killed once the relation
 *   files that were not in the data directory before it started (files only the migration's
 *   statements create: its new tables and indexes) hold `minCopiedBytes` beyond their first two
 *   pages each, which no empty table or index has: rows are being copied. This races the
 *   migration's end, which the caller's ledger check would catch; but the pending migrations run
 *   in one transaction, so the end is the end of the last one, seconds later for a few thousand
 *   rows.
 */
export async function killMidMigration(
  db: EarlierDatabase,
  opts: { table: string; accountId: string; minCopiedBytes: number },
): Promise<KillEvidence> {
  const { storage } = db;
  const appName = `ph-mid-migration-${process.pid}-${Date.now()}`;
  const start = () => {
    // The compiled script the test tree holds beside this one (scripts/test-build.mjs); tsx only
    // when run from the sources.
    const compiled = path.join(HERE, 'migrate-until-killed.js');
    const args = fs.existsSync(compiled)
      ? ['--liftoff-only', compiled]
      : ['--import', 'tsx', path.join(HERE, 'migrate-until-killed.ts')];
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...storage.env, APPLICATION_NAME: appName, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const output = () => `${out}${err}`;
    const kill = async () => {
      child.kill('SIGKILL');
      const signal = await exited;
      assert.equal(signal, 'SIGKILL', output());
      assert.equal(out, 'migrating\n', `killed while migrating, before migrate() returned: ${output()}`);
    };
    const notExited = () => child.exitCode === null && child.signalCode === null;
    return { child, kill, notExited, output };
  };

  if (storage.kind === 'postgres') {
    const admin = new pg.Client({ connectionString: storage.env.DATABASE_URL });
    await admin.connect();
    try {
      const oid = (await admin.query<{ oid: number }>('select to_regclass($1)::oid as oid', [opts.table])).rows[0]!.oid;
      assert.ok(oid, opts.table);
      await admin.query('begin');
      const held = await admin.query('select 1 from accounts where id = $1 for update', [opts.accountId]);
      assert.equal(held.rowCount, 1, 'the account whose row the migration will wait for');
      const me = (await admin.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const proc = start();
      try {
        let backend: { pid: number; moving: boolean } | undefined;
        for (const started = Date.now(); backend === undefined;) {
          assert.ok(proc.notExited(), `the migration ended without waiting for the account's row: ${proc.output()}`);
          assert.ok(
            Date.now() - started < 120_000,
            `the migration never waited for the account's row: ${proc.output()}`,
          );
          // pg_stat_activity is read once per transaction unless told to read it again.
          await admin.query('select pg_stat_clear_snapshot()');
          const r = await admin.query<{ pid: number; moving: boolean }>(
            `select a.pid, exists (select 1 from pg_locks l where l.pid = a.pid and l.relation = $2
                                      and l.mode = 'AccessExclusiveLock' and l.granted) as moving
               from pg_stat_activity a where a.application_name = $3 and $1 = any (pg_blocking_pids(a.pid))`,
            [me, oid, appName],
          );
          backend = r.rows[0];
          // Nothing tells this connection when the other one starts waiting: look again shortly.
          if (backend === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.ok(backend.moving, `the migration holds ${opts.table}, which it moves`);
        await proc.kill();
        await admin.query('rollback');
        // The dead client's backend ends its transaction (rolled back) before anyone gets the table.
        await admin.query('begin');
        await admin.query(`set local lock_timeout = '120s'`);
        await admin.query(`lock table ${opts.table} in access share mode`);
        await admin.query('rollback');
        return { backend: backend.pid, seen: `backend ${backend.pid} waiting in the copy, holding ${opts.table}` };
      } finally {
        if (proc.notExited()) proc.child.kill('SIGKILL');
      }
    } finally {
      await admin.end();
    }
  }

  const base = path.join(storage.env.DATA_DIR!, 'pgdata', 'base');
  const relationFiles = () => {
    const files: string[] = [];
    for (const d of fs.readdirSync(base))
      for (const f of fs.readdirSync(path.join(base, d))) if (/^\d+$/.test(f)) files.push(path.join(base, d, f));
    return files;
  };
  const before = new Set(relationFiles());
  const proc = start();
  // Every write of the engine wakes a watcher; the directory is read again after the last of a burst.
  const watchers = fs.readdirSync(base).map((d) => fs.watch(path.join(base, d)));
  try {
    const seen = await new Promise<string>((resolve, reject) => {
      let scheduled = false;
      const check = () => {
        scheduled = false;
        if (!proc.notExited()) return reject(new Error(`the migration ended before it was killed: ${proc.output()}`));
        const added = relationFiles().filter((f) => !before.has(f));
        let copied = 0;
        for (const f of added) {
          try {
            copied += Math.max(0, fs.statSync(f).size - 2 * 8192);
          } catch {
            // dropped meanwhile
          }
        }
        if (copied >= opts.minCopiedBytes)
          resolve(`${added.length} new relation files, ${copied} bytes of rows in them`);
      };
      const poke = () => {
        if (!scheduled) {
          scheduled = true;
          setImmediate(check);
        }
      };
      for (const w of watchers) w.on('change', poke);
      proc.child.on('exit', poke);
      poke();
    });
    await proc.kill();
    return { seen };
  } finally {
    for (const w of watchers) w.close();
    if (proc.notExited()) proc.child.kill('SIGKILL');
  }
}
