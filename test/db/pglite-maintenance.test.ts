import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type MaintenanceDone, maintain } from '../../src/db/pglite-maintenance.js';
import { openPglite } from '../../src/db/pglite.js';
import type { Database } from '../../src/db/types.js';

// The embedded engine has no autovacuum (docs/RELIABILITY.md "Load"): a statement prepared while
// its table was empty kept its plan, a full scan, as the table grew, and the load suite's
// ingestion went from 3 ms to 200 ms within three minutes. src/db/pglite-maintenance.ts analyses
// and vacuums what autovacuum would.
describe('embedded database maintenance', () => {
  let dir: string;
  let db: Database;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-maint-'));
    db = await openPglite(dir);
    await db.exec(
      `create table series (id bigint generated always as identity primary key, k int not null, v text not null)`,
    );
  });
  after(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Sequential scans of `series` while `fn` runs (the engine's statistics, published at once). */
  const seqScansDuring = async (fn: () => Promise<unknown>) => {
    const scans = async () => {
      await db.query('select pg_stat_force_next_flush()');
      return (
        await db.query<{ n: number }>(`select seq_scan::int as n from pg_stat_user_tables where relname = 'series'`)
      ).rows[0]!.n;
    };
    const before = await scans();
    await fn();
    return (await scans()) - before;
  };
  // The alert engine's way of reading a batch's rows by id (src/alerts/engine/sql.ts).
  const byIds = 'select s.v from series s join (select unnest($1::bigint[]) as id) b on b.id = s.id order by s.id';

  test('a statement planned on a nearly empty table is planned again once the table is analysed', async () => {
    // Prepared on a nearly empty table, run often enough that the engine keeps one generic plan.
    await db.query(`insert into series (k, v) select g, 'v' || g from generate_series(1, 5) g`);
    for (let i = 0; i < 8; i++) await db.query(byIds, [[1, 2]]);
    await db.query(`insert into series (k, v) select g, 'v' || g from generate_series(6, 20000) g`);
    const read = async () =>
      assert.deepEqual((await db.query<{ v: string }>(byIds, [[777, 19999]])).rows, [{ v: 'v777' }, { v: 'v19999' }]);
    assert.equal(
      await seqScansDuring(read),
      1,
      'without maintenance the plan made on the small table scans the whole table',
    );

    const done = await maintain(db);
    assert.deepEqual(
      done.filter((d) => d.table === 'public.series').map((d) => d.vacuum),
      [true],
      `maintained: ${JSON.stringify(done)}`,
    );
    assert.equal(await seqScansDuring(read), 0, 'after ANALYZE the same statement reads by the primary key');
  });

  test('a table maintained is left alone until it changes again; updates leave dead rows to vacuum', async () => {
    assert.deepEqual(
      (await maintain(db)).filter((d) => d.table === 'public.series'),
      [],
    );
    await db.query(`update series set v = v || '!' where k <= 10000`);
    const done = (await maintain(db)).filter((d) => d.table === 'public.series');
    assert.deepEqual(
      done.map((d) => d.vacuum),
      [true],
    );
    const stats = (
      await db.query<{ dead: number; analyzed: boolean }>(
        `select n_dead_tup::int as dead, last_analyze is not null as analyzed from pg_stat_user_tables where relname = 'series'`,
      )
    ).rows[0]!;
    assert.deepEqual(stats, { dead: 0, analyzed: true });
  });

  test('a round stops between tables once its task is being stopped', async () => {
    await db.exec(`create table a1 (k int); create table a2 (k int)`);
    await db.query(`insert into a1 select generate_series(1, 2000)`);
    await db.query(`insert into a2 select generate_series(1, 2000)`);
    const stop = new AbortController();
    const done: MaintenanceDone[] = [];
    const returned = await maintain(db, { signal: stop.signal, onDone: (d) => (done.push(d), stop.abort()) });
    assert.deepEqual(
      returned.map((d) => d.table),
      ['public.a1'],
    );
    assert.deepEqual(done, returned);
    assert.deepEqual(
      (await maintain(db)).map((d) => d.table),
      ['public.a2'],
      'the next round does what was left',
    );
  });
});
