import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { revokeKey } from '../../src/auth/keys.js';
import { useTestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/database.js';
import { evictionOf } from '../helpers/key-eviction.js';

/**
 * The revocation channel (LISTEN on PostgreSQL) can drop. Every cached key must be forgotten
 * when it drops and again when it listens anew, and revocations must reach the cache afterwards.
 */
describe(
  'key cache across a lost notification connection',
  { skip: !usingPostgres() && 'PostgreSQL only: PGlite notifies in process' },
  () => {
    const t = useTestApp();

    it('drops cached keys when the listener is cut and when it is back, then sees revocations again', async () => {
      const { headers, keyId } = await t.newKey();
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/products', headers })).statusCode, 200);

      const dropped = once(t.rt.keys, 'cleared');
      const pid = (
        await t.rt.db.query<{ pid: number }>(
          `select pid from pg_stat_activity where application_name = 'pricehound-listen' and query like '/* listenChannel */ LISTEN %' and datname = current_database()
         and pid <> pg_backend_pid() order by backend_start desc limit 1`,
        )
      ).rows[0]?.pid;
      assert.ok(pid, 'the listening backend is visible');
      // Several test files may listen on one database: cut every listener; each reconnects.
      await t.rt.db.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'pricehound-listen' and datname = current_database()`,
      );
      await dropped; // on the drop
      await once(t.rt.keys, 'cleared'); // and once it listens again

      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/products', headers })).statusCode, 200);
      const evicted = evictionOf(t.rt.keys, keyId);
      await revokeKey(t.rt.db, keyId);
      assert.equal(await evicted, keyId);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/products', headers })).statusCode, 401);
    });
  },
);
