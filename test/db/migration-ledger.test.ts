import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { migrate, readMigrations, type Migration } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/types.js';
import { testStorage, type TestStorage } from '../helpers/database.js';

// Issue 27: the ledger (pricehound_migrations) is keyed by number and checked by name, on a
// real database of each kind: a renamed or swapped file under an applied number is refused
// before anything runs, with a message that names both files.

const T = { timeout: 60_000 };

describe('the migration ledger checks names as well as numbers', () => {
  let storage: TestStorage;
  let db: Database;
  const all = readMigrations();
  const ledger = async () =>
    (
      await db.query<{ id: number; name: string }>(
        '/* readLedger */ select id, name from pricehound_migrations order by id',
      )
    ).rows.map((r) => `${Number(r.id)} ${r.name}`);

  before(async () => {
    storage = await testStorage();
    db = await openDatabase(loadConfig(storage.env));
    await migrate(db);
  });
  after(async () => {
    await db?.close();
    await storage?.cleanup();
  });

  it('applies nothing twice when the files are the ones applied', T, async () => {
    assert.deepEqual(await migrate(db), []);
    assert.equal((await ledger()).length, all.length);
  });

  it('refuses a renamed file with the same number, naming both, and changes nothing', T, async () => {
    const before = await ledger();
    const renamed: Migration[] = all.map((m) =>
      m.id === 3 ? { ...m, name: m.name.replace(/\.sql$/, '_renamed.sql') } : m,
    );
    await assert.rejects(migrate(db, renamed), (err: Error) => {
      assert.match(
        err.message,
        /migration 0003 was applied as 0003_\w+\.sql but this version of pricehound has 0003_\w+_renamed\.sql/,
      );
      return true;
    });
    assert.deepEqual(await ledger(), before);
  });

  it('refuses two files that swapped numbers', T, async () => {
    const [a, b] = [all[1]!, all[2]!];
    const swapped = all.map((m) =>
      m === a
        ? { ...b, id: a.id, name: `${a.name.slice(0, 4)}${b.name.slice(4)}` }
        : m === b
          ? { ...a, id: b.id, name: `${b.name.slice(0, 4)}${a.name.slice(4)}` }
          : m,
    );
    await assert.rejects(migrate(db, swapped), new RegExp(`migration ${a.name.slice(0, 4)} was applied as ${a.name}`));
  });

  it('refuses a pending migration list that lacks an applied number, and one newer than it knows', T, async () => {
    const gap = all.filter((m) => m.id !== 2);
    await assert.rejects(
      migrate(db, gap),
      /has migration 0002_\w+\.sql, which this version of pricehound does not have/,
    );
    const older = all.slice(0, -1);
    await assert.rejects(
      migrate(db, older),
      new RegExp(`has migration ${all.at(-1)!.id} \\(${all.at(-1)!.name}\\), newer than this version`),
    );
  });

  it('still applies a new file with a new number', T, async () => {
    const next: Migration = {
      id: all.at(-1)!.id + 1,
      name: `${String(all.at(-1)!.id + 1).padStart(4, '0')}_ledger_probe.sql`,
      sql: '/* createLedgerProbe */ create table ledger_probe (id int)',
    };
    assert.deepEqual(await migrate(db, [...all, next]), [next.name]);
    assert.equal((await ledger()).at(-1), `${next.id} ${next.name}`);
  });
});
