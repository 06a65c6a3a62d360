import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openPglite } from '../../src/db/pglite.js';
import { DatabaseUnavailableError, type Database } from '../../src/db/types.js';

// The embedded engine on its thread, through openPglite as the service opens it: what crosses
// the thread boundary (results, PostgreSQL's errors, transactions, notifications, close).
const template = process.env.PRICEHOUND_TEST_TEMPLATE;
const skip =
  template && fs.existsSync(template)
    ? false
    : 'needs the PGlite template scripts/run-tests.mjs makes (not made with DATABASE_URL)';

describe('PGlite on its thread', { skip }, () => {
  let dir: string;
  let db: Database;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-pglite-thread-'));
    fs.cpSync(template!, dir, { recursive: true });
    db = await openPglite(dir);
    await db.exec('create table thread_t (id int primary key, name text)');
  });
  after(async () => {
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("results keep the parsers' types, and PostgreSQL's errors keep their fields", async () => {
    const r = await db.query<{ n: number; d: string; at: Date }>(
      `select 9007199254740991::int8 as n, 1.50::numeric as d, now() as at`,
    );
    assert.equal(r.rows[0]!.n, 9007199254740991);
    assert.equal(r.rows[0]!.d, '1.50');
    assert.ok(r.rows[0]!.at instanceof Date);
    await db.query('insert into thread_t (id, name) values ($1, $2)', [1, 'one']);
    await assert.rejects(db.query('insert into thread_t (id, name) values ($1, $2)', [1, 'again']), (err: unknown) => {
      assert.ok(err instanceof Error);
      const e = err as Error & { code?: string; constraint?: string };
      assert.equal(e.code, '23505');
      assert.equal(e.constraint, 'thread_t_pkey');
      assert.match(e.message, /duplicate key/);
      return true;
    });
    await assert.rejects(db.query('select * from nowhere'), { code: '42P01' });
  });

  test('a transaction commits, or rolls back when its function throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query('insert into thread_t (id, name) values ($1, $2)', [2, 'two']);
    });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('insert into thread_t (id, name) values ($1, $2)', [3, 'three']);
        throw new Error('undo');
      }),
      /undo/,
    );
    const ids = (await db.query<{ id: number }>('select id from thread_t order by id')).rows.map((r) => r.id);
    assert.deepEqual(ids, [1, 2]);
  });

  test('LISTEN payloads arrive as notifications until unlistened', async () => {
    const got = (into: string[]) => {
      const waiters: Array<{ payload: string; resolve: () => void }> = [];
      const onMessage = (p: string): void => {
        into.push(p);
        for (const w of waiters) if (w.payload === p) w.resolve();
      };
      const arrival = (payload: string) => new Promise<void>((resolve) => waiters.push({ payload, resolve }));
      return { onMessage, arrival };
    };
    const dropped: string[] = [];
    const kept: string[] = [];
    const a = got(dropped);
    const b = got(kept);
    const unlistenA = await db.listen('thread_ch', a.onMessage);
    const unlistenB = await db.listen('thread_ch', b.onMessage);
    try {
      const hello = Promise.all([a.arrival('hello'), b.arrival('hello')]);
      await db.query(`select pg_notify('thread_ch', 'hello')`);
      await hello;
      await unlistenA();
      const after = b.arrival('after');
      await db.query(`select pg_notify('thread_ch', 'after')`);
      await after;
      await db.query('select 1'); // answered after any notification the engine sent before it
      assert.deepEqual(kept, ['hello', 'after']);
      assert.deepEqual(dropped, ['hello']);
    } finally {
      await unlistenB();
    }
  });

  test('after close every call fails with DatabaseUnavailableError, and close can be called again', async () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-pglite-closed-'));
    fs.cpSync(template!, copy, { recursive: true });
    const closing = await openPglite(copy);
    try {
      await closing.close();
      await assert.rejects(closing.query('select 1'), (err: unknown) => {
        assert.ok(err instanceof DatabaseUnavailableError);
        assert.equal(err.message, 'the embedded database is closed');
        return true;
      });
      await closing.close();
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});
