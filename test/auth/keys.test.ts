import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { createKey, KEY_PREFIX, listKeys, revokeKey } from '../../src/auth/keys.js';
import { openPostgres } from '../../src/db/postgres.js';
import { useTestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/database.js';
import { evictionOf } from '../helpers/key-eviction.js';

// API.md "Identity": keys start with a fixed prefix, are stored only as a hash, and revocation
// takes effect on the next request, also for a key the process had already cached. On
// PostgreSQL the revocation reaches each process's cache by NOTIFY (src/auth/key-cache.ts).

const KEY_FORMAT = /^ph_live_[A-Za-z0-9_-]{43}$/;

describe('API keys', () => {
  const t = useTestApp();

  const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/products', headers });

  it('have a fixed prefix and 256 random bits', async () => {
    const a = await t.newKey('free');
    const b = await t.newKey('free');
    assert.equal(KEY_PREFIX, 'ph_live_');
    assert.match(a.key, KEY_FORMAT);
    assert.match(b.key, KEY_FORMAT);
    assert.notEqual(a.key, b.key);
    assert.equal(Buffer.from(a.key.slice(KEY_PREFIX.length), 'base64url').length, 32);
  });

  it('are stored only as a hash: no column of api_keys holds the key or a real part of its secret', async () => {
    const k = await createKey(t.rt.db, { plan: 'starter', name: 'ci' });
    const secret = k.key.slice(KEY_PREFIX.length);
    const r = await t.rt.db.query<{ j: string; key_hash: string; key_prefix: string }>(
      'select row_to_json(k)::text as j, key_hash, key_prefix from api_keys k where id = $1',
      [k.id],
    );
    const row = r.rows[0]!;
    assert.equal(row.key_hash, crypto.createHash('sha256').update(k.key).digest('hex'));
    // the listing prefix shows the product prefix and 6 characters (36 of 256 bits)
    assert.equal(row.key_prefix, k.key.slice(0, KEY_PREFIX.length + 6));
    for (let i = 0; i + 10 <= secret.length; i++) {
      assert.ok(!row.j.includes(secret.slice(i, i + 10)), `api_keys contains secret characters ${i}..${i + 10}`);
    }
    // nor does anything the listing returns
    const listed = JSON.stringify(await listKeys(t.rt.db, k.account_id));
    assert.ok(!listed.includes(secret.slice(6, 16)));
    assert.ok(!('key' in (await listKeys(t.rt.db, k.account_id))[0]!));
  });

  it('a key revoked before its first use is refused', async () => {
    const k = await t.newKey('free');
    const revoked = await revokeKey(t.rt.db, k.keyId);
    assert.ok(revoked?.revoked_at instanceof Date);
    const res = await get(k.headers);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json<{ code: string }>().code, 'unauthorized');
  });

  it('a cached key is refused on the request after its revocation is announced', { timeout: 15_000 }, async () => {
    const k = await t.newKey('free');
    const other = await t.newKey('free', k.accountId);
    for (let i = 0; i < 3; i++) assert.equal((await get(k.headers)).statusCode, 200); // now cached
    assert.equal((await get(other.headers)).statusCode, 200);

    let revokeReturned = false;
    let evictedBeforeRevokeReturned = false;
    const evicted = evictionOf(t.rt.keys, k.keyId).then((keyId) => {
      evictedBeforeRevokeReturned = !revokeReturned;
      return keyId;
    });
    await revokeKey(t.rt.db, k.keyId);
    revokeReturned = true;
    if (t.storage.kind === 'pglite') {
      // One embedded database, one process: the notification is handled before revokeKey returns.
      assert.ok(evictedBeforeRevokeReturned, 'PGlite delivers the NOTIFY within the revoking transaction');
    }
    const keyId = await evicted;
    assert.equal(keyId, k.keyId);

    const refused = await get(k.headers);
    assert.equal(refused.statusCode, 401);
    assert.match(String(refused.headers['www-authenticate']), /^Bearer /);
    // only that key: the account's other key is still accepted
    assert.equal((await get(other.headers)).statusCode, 200);
    // revoking again is harmless, an unknown id is reported as such
    assert.ok(await revokeKey(t.rt.db, k.keyId));
    assert.equal(await revokeKey(t.rt.db, 'key_doesnotexist'), undefined);
  });

  it(
    'a revocation from another connection (as by the CLI in another process) reaches the cache by NOTIFY',
    { timeout: 15_000 },
    async (ctx) => {
      if (!usingPostgres()) {
        ctx.skip('embedded PGlite is single-process: there is no other connection to revoke from');
        return;
      }
      const k = await t.newKey('business');
      assert.equal((await get(k.headers)).statusCode, 200); // cached
      const cli = await openPostgres(t.storage.env.DATABASE_URL!);
      try {
        const evicted = evictionOf(t.rt.keys, k.keyId);
        await revokeKey(cli, k.keyId);
        assert.equal(await evicted, k.keyId);
      } finally {
        await cli.close();
      }
      assert.equal((await get(k.headers)).statusCode, 401);
    },
  );

  it('an authenticated request costs no query once the key is cached', async () => {
    const k = await t.newKey('free');
    assert.equal(Number((await get(k.headers)).headers['x-ratelimit-limit']), 1000);
    // Change the row behind the cache's back (no NOTIFY): a cached key is not read again.
    await t.rt.db.query(`update api_keys set plan = 'business' where id = $1`, [k.keyId]);
    assert.equal(Number((await get(k.headers)).headers['x-ratelimit-limit']), 1000);
    // Dropping the cache (as when the notification channel is lost) reads it again.
    t.rt.keys.clear();
    assert.equal(Number((await get(k.headers)).headers['x-ratelimit-limit']), 100_000);
  });

  it('a lookup in flight when a revocation arrives is not cached (it may predate the revocation)', async () => {
    const k = await t.newKey('free');
    const pending = t.rt.keys.resolve(k.key); // the query is on its way
    t.rt.keys.evict(k.keyId); // ...when the revocation is announced
    assert.equal((await pending)?.keyId, k.keyId);
    // Revoke without a notification: only a key that was not cached is refused now.
    await t.rt.db.query('update api_keys set revoked_at = now() where id = $1', [k.keyId]);
    assert.equal((await get(k.headers)).statusCode, 401);
  });
});
