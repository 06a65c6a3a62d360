// The migrated PostgreSQL database each test file's database is cloned from (CREATE DATABASE ...
// TEMPLATE, test/helpers/database.ts) in the suite's PostgreSQL pass: migrating a fresh schema
// per file cost the server ~0.7 CPU-s, ~300 times a pass. Made anew for every run (migrations
// change between runs, and a run's databases are its own), dropped with whatever test databases
// a killed run left behind once the run ends.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const databaseOf = (url) => decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';

async function onServer(base, fn) {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Creates and migrates the template `<run>_tpl` on DATABASE_URL's server, where the run's name is
 * `<database>_r<pid>`: the test databases are `<run>_<suffix>` (test/helpers/database.ts). Its run name.
 */
export async function makePgTemplate(base, env = process.env) {
  const run = `${databaseOf(base)}_r${process.pid}`;
  const name = `${run}_tpl`;
  await onServer(base, async (c) => {
    await c.query(`drop database if exists ${c.escapeIdentifier(name)} with (force)`);
    await c.query(`create database ${c.escapeIdentifier(name)} template template0`);
  });
  const url = new URL(base);
  url.pathname = `/${name}`;
  url.searchParams.delete('options');
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'scripts/make-test-template.ts'), url.toString()],
    { stdio: 'inherit', env, cwd: root },
  );
  if (r.status !== 0) {
    await dropPgRun(base, run);
    throw new Error('could not migrate the PostgreSQL test template (scripts/make-test-template.ts)');
  }
  return run;
}

/** Drops the run's template and every test database of the run still there (a killed file's). */
export async function dropPgRun(base, run) {
  await onServer(base, async (c) => {
    const prefix = `${run}_`.replace(/[\\_%]/g, (m) => `\\${m}`);
    const { rows } = await c.query(`select datname from pg_database where datname like $1`, [`${prefix}%`]);
    for (const { datname } of rows)
      await c.query(`drop database if exists ${c.escapeIdentifier(datname)} with (force)`);
  });
}
