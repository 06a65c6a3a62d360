import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPostgres } from '../../src/db/postgres.js';
import type { Database } from '../../src/db/types.js';
import { dropObservationsBefore, ensureObservationPartitions } from '../../src/prices/partitions/index.js';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';

/**
 * Partition maintenance beside readers that hold its tables (src/db/partitions.ts,
 * withSetLocked). A request that has read price_days and then reads price_observations (the
 * trends do) once deadlocked with the creation of a month, which locked price_observations and
 * then waited for price_days: a 500 in CI's mixed load. Now the maintenance locks every table of
 * its set up front with a short lock_timeout and gives way: the reader is never the victim, and
 * the maintenance finishes once the reader is gone. PostgreSQL only: the embedded engine runs one
 * statement at a time, so nothing can hold a table while maintenance waits for it.
 */
describe(
  'partition maintenance beside readers holding its tables',
  { skip: usingPostgres() ? false : 'PostgreSQL only: the embedded engine has one connection' },
  () => {
    let storage: TestStorage;
    let db: Database;
    let reader: pg.Client;
    let readerPid: number;

    before(async () => {
      storage = await testStorage();
      db = await openPostgres(storage.env.DATABASE_URL!);
      reader = new pg.Client({ connectionString: storage.env.DATABASE_URL });
      await reader.connect();
      readerPid = (await reader.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    });
    after(async () => {
      await reader?.end();
      await db?.close();
      await storage?.cleanup();
    });

    /** Until another backend waits for a lock the reader holds (polled: PostgreSQL announces no lock waits). */
    async function maintenanceWaitsForReader(): Promise<void> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const r = await reader.query<{ n: number }>(
          `select count(*)::int as n from pg_locks w
            where not w.granted and w.pid <> $1
              and exists (select 1 from pg_locks h where h.pid = $1 and h.granted and h.relation = w.relation)`,
          [readerPid],
        );
        if (r.rows[0]!.n > 0) return;
        if (Date.now() > deadline) throw new Error('maintenance never waited for the reader');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    /** A reader that holds price_days, lets maintenance start, then reads price_observations. */
    async function readAcross<T>(maintenance: () => Promise<T>): Promise<T> {
      await reader.query('begin');
      try {
        await reader.query('select count(*) from price_days');
        const running = maintenance();
        // Observed whatever happens next, so a failure is reported by the assertion below.
        const settled = running.then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        await maintenanceWaitsForReader();
        const r = await reader.query<{ n: string }>('select count(*) as n from price_observations');
        assert.equal(r.rows[0]!.n, '0');
        await reader.query('commit');
        const done = await settled;
        if (!done.ok) throw done.error;
        return done.value;
      } catch (err) {
        await reader.query('rollback').catch(() => undefined);
        throw err;
      }
    }

    it('creating a month: the reader gets its rows, then the month is made for all six tables', async () => {
      const made = await readAcross(() => ensureObservationPartitions(db, new Date('2035-06-15T00:00:00Z'), 0));
      assert.deepEqual(made.created.sort(), [
        'price_blocks_p203506',
        'price_day_texts_p203506',
        'price_days_p203506',
        'price_hours_p203506',
        'price_local_days_p203506',
        'price_observations_p203506',
      ]);
    });

    it('dropping a month: the reader gets its rows, then the month is gone from all six tables', async () => {
      const done = await readAcross(() => dropObservationsBefore(db, new Date('2035-07-01T00:00:00Z')));
      assert.ok(done.dropped.includes('price_observations_p203506'), JSON.stringify(done));
      const left = await db.query<{ n: number }>(
        `select count(*)::int as n from pg_class where relname like 'price\\_%\\_p203506'`,
      );
      assert.equal(left.rows[0]!.n, 0);
    });
  },
);
