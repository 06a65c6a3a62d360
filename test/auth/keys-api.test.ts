import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';
import { useTestApp } from '../helpers/app.js';
import { usingPostgres } from '../helpers/database.js';
import { evictionOf } from '../helpers/key-eviction.js';
import { expectError, type Headers, PREFIXES } from '../products/support.js';
import type { ApiKeyMaybeSecret, Page } from '../helpers/api-types.js';

// design/API.md "API keys over HTTP": /keys (list, create), /keys/{id} (get, PATCH name, DELETE =
// revoke); the key object; a new key's plan at most the creator's; revocation on the next
// request; no revoking the last full key (409); only full keys manage keys. Bad input: a clear
// 4xx in the one error shape, and nothing written.

const KEY_FIELDS = ['created_at', 'id', 'last_used_at', 'name', 'object', 'plan', 'prefix', 'revoked_at', 'scope'];
const bearer = (key: string): Headers => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

describe('API keys over HTTP', () => {
  const t = useTestApp();

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
    t.app.inject({
      method,
      url: `/api/v1${url}`,
      headers,
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });

  async function create(
    headers: Headers,
    body: Record<string, unknown> = {},
  ): Promise<ApiKeyMaybeSecret & { secret: string }> {
    const res = await call('POST', '/keys', headers, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  /** The account's api_keys rows as stored, for before/after comparisons. */
  async function rows(accountId: string) {
    const r = await t.rt.db.query(
      'select id, name, plan, scope, key_hash, key_prefix, created_at, revoked_at from api_keys where account_id = $1 order by id',
      [accountId],
    );
    return r.rows;
  }

  it('creates a key: the key object, its secret once, a Location, and a secret that works at once', async () => {
    const owner = await t.newKey('starter');
    for (const prefix of PREFIXES) {
      const res = await t.app.inject({
        method: 'POST',
        url: `${prefix}/keys`,
        headers: owner.headers,
        payload: { name: 'CI (read)', scope: 'read', plan: 'free' },
      });
      assert.equal(res.statusCode, 201, res.body);
      const k = res.json<ApiKeyMaybeSecret & { secret: string }>();
      assert.deepEqual(Object.keys(k).sort(), [...KEY_FIELDS, 'secret'].sort());
      assert.equal(k.object, 'api_key');
      assert.match(k.id, /^key_[0-9a-z]+$/);
      assert.equal(k.name, 'CI (read)');
      assert.equal(k.scope, 'read');
      assert.equal(k.plan, 'free');
      assert.match(k.secret, /^ph_live_[A-Za-z0-9_-]{43}$/);
      assert.equal(k.prefix, k.secret.slice(0, 12));
      assert.equal(k.last_used_at, null);
      assert.equal(k.revoked_at, null);
      assert.equal(res.headers.location, `${prefix}/keys/${k.id}`);
      // Stored only as its hash: no column holds the secret.
      const stored = await t.rt.db.query<{ j: string; key_hash: string }>(
        'select row_to_json(k)::text as j, key_hash from api_keys k where id = $1',
        [k.id],
      );
      assert.equal(stored.rows[0]!.key_hash, crypto.createHash('sha256').update(k.secret).digest('hex'));
      assert.ok(!stored.rows[0]!.j.includes(k.secret.slice(14)), 'the secret is not stored');
      // The new key belongs to the creator's account and works on the next request, with its plan's limit.
      const usage = await call('GET', '/usage', bearer(k.secret));
      assert.equal(usage.statusCode, 200);
      assert.equal(usage.json<{ account_id: string }>().account_id, owner.accountId);
      assert.equal(usage.headers['x-ratelimit-limit'], '1000');
      // Never shown again: neither by get nor by list.
      const got = await call('GET', `/keys/${k.id}`, owner.headers);
      assert.equal(got.statusCode, 200);
      assert.deepEqual(Object.keys(got.json()).sort(), KEY_FIELDS);
      assert.ok(!got.body.includes(k.secret.slice(12)));
      const listed = await call('GET', '/keys?limit=100', owner.headers);
      assert.ok(!listed.body.includes(k.secret.slice(12)));
    }
  });

  it('a retried create with the same Idempotency-Key answers the same key and secret, and makes one key', async () => {
    const owner = await t.newKey('free');
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: { ...owner.headers, 'idempotency-key': 'make-ci-key-1' },
        payload: { name: 'CI' },
      });
    const first = await send();
    const again = await send();
    assert.equal(first.statusCode, 201);
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), first.json());
    assert.equal((await rows(owner.accountId)).length, 2);
  });

  it("defaults: the creating key's plan, scope full, no name", async () => {
    const owner = await t.newKey('business');
    const k = await create(owner.headers);
    assert.equal(k.plan, 'business');
    assert.equal(k.scope, 'full');
    assert.equal(k.name, null);
  });

  it("a new key's plan is at most the creating key's: above it is a 403 naming plan, and nothing is written", async () => {
    for (const [own, allowed, refused] of [
      ['free', ['free'], ['starter', 'business']],
      ['starter', ['free', 'starter'], ['business']],
      ['business', ['free', 'starter', 'business'], []],
    ] as const) {
      const owner = await t.newKey(own);
      for (const plan of allowed) assert.equal((await create(owner.headers, { plan })).plan, plan);
      const before = await rows(owner.accountId);
      for (const plan of refused) {
        const body = expectError(
          await call('POST', '/keys', owner.headers, { plan, name: 'more' }),
          403,
          'insufficient_scope',
        );
        assert.deepEqual(
          body.details?.map((d) => d.field),
          ['plan'],
        );
        assert.match(body.details![0]!.message, new RegExp(`at most ${own}`));
      }
      assert.deepEqual(await rows(owner.accountId), before, `${own}: nothing written`);
    }
  });

  it("lists the account's keys newest first, revoked ones included, with filters and pages; never another account's", async () => {
    const owner = await t.newKey('business');
    const other = await t.newKey('business');
    await create(other.headers, { name: 'Other account' });
    const made: ApiKeyMaybeSecret[] = [];
    for (let i = 0; i < 4; i++)
      made.push(await create(owner.headers, { name: `key ${i}`, scope: i % 2 ? 'read' : 'full' }));
    const revokedRes = await call('DELETE', `/keys/${made[0]!.id}`, owner.headers);
    assert.equal(revokedRes.statusCode, 200, revokedRes.body);

    const all = (await call('GET', '/keys?limit=100', owner.headers)).json<Page<ApiKeyMaybeSecret>>();
    assert.deepEqual(
      all.data.map((k) => k.id),
      [...made.map((k) => k.id).reverse(), owner.keyId],
    );
    assert.ok(all.data.every((k) => k.object === 'api_key' && !('secret' in k)));
    assert.doesNotMatch(JSON.stringify(all), /Other account/);

    const ids = async (q: string) =>
      (await call('GET', `/keys?${q}`, owner.headers)).json<Page<ApiKeyMaybeSecret>>().data.map((k) => k.id);
    assert.deepEqual(await ids('revoked=true'), [made[0]!.id]);
    assert.deepEqual(await ids('revoked=false&scope=read'), [made[3]!.id, made[1]!.id]);
    assert.deepEqual(await ids('scope=full&sort=created_at'), [owner.keyId, made[0]!.id, made[2]!.id]);

    const first = (await call('GET', '/keys?limit=2', owner.headers)).json<Page<ApiKeyMaybeSecret>>();
    assert.equal(first.pagination.has_more, true);
    const second = (await call('GET', `/keys?limit=2&cursor=${first.pagination.next_cursor}`, owner.headers)).json<
      Page<ApiKeyMaybeSecret>
    >();
    assert.deepEqual(
      [...first.data, ...second.data].map((k) => k.id),
      all.data.slice(0, 4).map((k) => k.id),
    );
    expectError(await call('GET', '/keys?scope=admin', owner.headers), 422, 'validation_failed');
  });

  it('renames with PATCH: only the name; null clears it; an empty body changes nothing', async () => {
    const owner = await t.newKey('starter');
    const k = await create(owner.headers, { name: 'old', scope: 'read', plan: 'free' });
    const renamed = await call('PATCH', `/keys/${k.id}`, owner.headers, { name: 'Grafana / ops-2' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const r = renamed.json<ApiKeyMaybeSecret>();
    const { secret: _secret, ...shown } = k;
    assert.deepEqual({ ...r, name: 'old' }, shown, 'nothing but the name changed');
    assert.equal(r.name, 'Grafana / ops-2');
    assert.equal(
      (await call('PATCH', `/keys/${k.id}`, owner.headers, {})).json<ApiKeyMaybeSecret>().name,
      'Grafana / ops-2',
    );
    assert.equal(
      (await call('PATCH', `/keys/${k.id}`, owner.headers, { name: null })).json<ApiKeyMaybeSecret>().name,
      null,
    );
    // A key may rename itself, and names are any script.
    assert.equal(
      (
        await call('PATCH', `/keys/${owner.keyId}`, owner.headers, { name: 'Kasse Zürich 東京' })
      ).json<ApiKeyMaybeSecret>().name,
      'Kasse Zürich 東京',
    );
  });

  it('refuses bad input with a clear 4xx in the error shape and writes nothing', async () => {
    const owner = await t.newKey('starter');
    const k = await create(owner.headers, { name: 'keep me' });
    const before = await rows(owner.accountId);
    const bad: [string, 'POST' | 'PATCH', string, unknown, number, string, string?][] = [
      ['unknown field', 'POST', '/keys', { name: 'x', admin: true }, 422, 'validation_failed', 'admin'],
      ['scope and plan cannot change', 'PATCH', `/keys/${k.id}`, { plan: 'free' }, 422, 'validation_failed', 'plan'],
      ['scope and plan cannot change', 'PATCH', `/keys/${k.id}`, { scope: 'read' }, 422, 'validation_failed', 'scope'],
      ['unknown scope', 'POST', '/keys', { scope: 'admin' }, 422, 'validation_failed', 'scope'],
      ['unknown plan', 'POST', '/keys', { plan: 'enterprise' }, 422, 'validation_failed', 'plan'],
      ['malformed JSON', 'POST', '/keys', '{"name": "x",', 400, 'invalid_json'],
      ['malformed JSON', 'PATCH', `/keys/${k.id}`, '{name: x}', 400, 'invalid_json'],
      ['not an object', 'POST', '/keys', '[]', 422, 'validation_failed'],
      ['huge name', 'POST', '/keys', { name: 'n'.repeat(201) }, 422, 'validation_failed', 'name'],
      ['huge name', 'PATCH', `/keys/${k.id}`, { name: 'n'.repeat(100_000) }, 422, 'validation_failed', 'name'],
      ['empty name', 'POST', '/keys', { name: '' }, 422, 'validation_failed', 'name'],
      ['blank name', 'PATCH', `/keys/${k.id}`, { name: '   ' }, 422, 'validation_failed', 'name'],
      ['HTML in a name', 'POST', '/keys', { name: '<img src=x onerror=alert(1)>' }, 422, 'validation_failed', 'name'],
      [
        'HTML in a name',
        'PATCH',
        `/keys/${k.id}`,
        { name: '<script>alert(1)</script>' },
        422,
        'validation_failed',
        'name',
      ],
      ['SQL in a name', 'POST', '/keys', { name: "x'); drop table api_keys; --" }, 422, 'validation_failed', 'name'],
      ['SQL in a name', 'PATCH', `/keys/${k.id}`, { name: "' or '1'='1" }, 422, 'validation_failed', 'name'],
      ['control characters in a name', 'POST', '/keys', { name: 'a\u0000b' }, 422, 'validation_failed', 'name'],
      ['control characters in a name', 'POST', '/keys', { name: 'a\u001b[31mred' }, 422, 'validation_failed', 'name'],
      ['a name of the wrong type', 'POST', '/keys', { name: 42 }, 422, 'validation_failed', 'name'],
    ];
    for (const [what, method, url, payload, status, code, field] of bad) {
      const body = expectError(await call(method, url, owner.headers, payload), status, code);
      if (field)
        assert.ok(
          body.details?.some((d) => d.field === field),
          `${what}: details name ${field}: ${JSON.stringify(body)}`,
        );
      // The message says what a name may hold (or its length, or its type).
      if (field === 'name')
        assert.match(
          body.details!.find((d) => d.field === 'name')!.message,
          /letters, digits|characters|empty|type/,
          what,
        );
    }
    // A body that is too large, and one that is not JSON.
    expectError(
      await call('POST', '/keys', owner.headers, JSON.stringify({ name: 'x'.repeat(t.rt.config.bodyLimit) })),
      413,
      'payload_too_large',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/keys',
        headers: { ...owner.headers, 'content-type': 'text/plain' },
        payload: 'name=x',
      }),
      415,
      'unsupported_media_type',
    );
    // Ids that name nothing.
    for (const id of ['key_0000000000nonexistent000', 'prod_123', 'key_x%00', "key_1'or'1"]) {
      expectError(await call('PATCH', `/keys/${id}`, owner.headers, { name: 'x' }), 404, 'not_found');
      expectError(await call('DELETE', `/keys/${id}`, owner.headers), 404, 'not_found');
    }
    assert.deepEqual(await rows(owner.accountId), before, 'nothing written');
  });

  it("answers another account's key exactly like one that does not exist (404, never 403), and changes nothing", async () => {
    const owner = await t.newKey('business');
    const secret = await create(owner.headers, { name: 'Secret deploy key' });
    const intruder = await t.newKey('business');
    const before = await rows(owner.accountId);
    const missing = expectError(
      await call('GET', '/keys/key_0000000000nonexistent000', intruder.headers),
      404,
      'not_found',
    );
    for (const prefix of PREFIXES) {
      for (const [method, payload] of [
        ['GET', undefined],
        ['PATCH', { name: 'hijacked' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.app.inject({
          method,
          url: `${prefix}/keys/${secret.id}`,
          headers: intruder.headers,
          ...(payload ? { payload } : {}),
        });
        const body = expectError(res, 404, 'not_found');
        assert.equal(body.error, missing.error);
        assert.doesNotMatch(res.body, /Secret deploy|ph_live_/);
      }
    }
    assert.deepEqual(await rows(owner.accountId), before);
    // The secret still works.
    assert.equal((await call('GET', '/products', bearer(secret.secret))).statusCode, 200);
  });

  it('revokes with DELETE: refused from the next request on, though cached; listed with revoked_at; again is harmless', async () => {
    const owner = await t.newKey('business');
    const k = await create(owner.headers, { name: 'to revoke' });
    for (let i = 0; i < 3; i++) assert.equal((await call('GET', '/products', bearer(k.secret))).statusCode, 200); // cached now
    const res = await call('DELETE', `/keys/${k.id}`, owner.headers);
    assert.equal(res.statusCode, 200, res.body);
    const revoked = res.json<ApiKeyMaybeSecret>();
    assert.equal(revoked.id, k.id);
    assert.ok(revoked.revoked_at && Date.parse(revoked.revoked_at) >= Date.parse(k.created_at));
    assert.ok(!('secret' in revoked));
    expectError(await call('GET', '/products', bearer(k.secret)), 401, 'unauthorized');
    const again = await call('DELETE', `/keys/${k.id}`, owner.headers);
    assert.equal(again.statusCode, 200);
    assert.equal(again.json<ApiKeyMaybeSecret>().revoked_at, revoked.revoked_at);
    assert.equal(
      (await call('GET', `/keys/${k.id}`, owner.headers)).json<ApiKeyMaybeSecret>().revoked_at,
      revoked.revoked_at,
    );
  });

  it("never revokes the account's last unrevoked full key (409, nothing written); read keys do not count; a key may revoke itself", async () => {
    const owner = await t.newKey('business');
    const reader = await create(owner.headers, { scope: 'read' });
    const before = await rows(owner.accountId);
    const body = expectError(await call('DELETE', `/keys/${owner.keyId}`, owner.headers), 409, 'conflict');
    assert.match(body.error, /last full key/);
    assert.deepEqual(await rows(owner.accountId), before);
    assert.equal((await call('GET', '/products', owner.headers)).statusCode, 200, 'still works');
    // With a second full key, the first may revoke itself; then the second is the last.
    const second = await create(owner.headers, { name: 'second' });
    const self = await call('DELETE', `/keys/${owner.keyId}`, owner.headers);
    assert.equal(self.statusCode, 200, self.body);
    expectError(await call('GET', '/products', owner.headers), 401, 'unauthorized');
    expectError(await call('DELETE', `/keys/${second.id}`, bearer(second.secret)), 409, 'conflict');
    // A read key is revoked freely.
    assert.equal((await call('DELETE', `/keys/${reader.id}`, bearer(second.secret))).statusCode, 200);
  });

  it('two revocations at once of the last two full keys: exactly one succeeds', async () => {
    // Several accounts at once, both keys warmed in the cache, so the two requests of a pair
    // really overlap in the database (on PostgreSQL; the embedded engine runs one at a time).
    const pairs = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const owner = await t.newKey('business');
        const second = await create(owner.headers);
        assert.equal((await call('GET', '/usage', bearer(second.secret))).statusCode, 200);
        return { owner, second };
      }),
    );
    const answers = await Promise.all(
      pairs.map(({ owner, second }) =>
        Promise.all([
          call('DELETE', `/keys/${owner.keyId}`, owner.headers),
          call('DELETE', `/keys/${second.id}`, bearer(second.secret)),
        ]),
      ),
    );
    for (const [i, [a, b]] of answers.entries()) {
      assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 409], `${a.body} ${b.body}`);
      const active = await t.rt.db.query<{ n: number }>(
        "select count(*)::int as n from api_keys where account_id = $1 and scope = 'full' and revoked_at is null",
        [pairs[i]!.owner.accountId],
      );
      assert.equal(active.rows[0]!.n, 1);
    }
  });

  it('only full keys manage keys: a read key gets 403 insufficient_scope on every key operation, and nothing is written', async () => {
    const owner = await t.newKey('business');
    const reader = await create(owner.headers, { scope: 'read', name: 'reader' });
    const before = await rows(owner.accountId);
    for (const prefix of PREFIXES) {
      for (const [method, url, payload] of [
        ['GET', '/keys', undefined],
        ['POST', '/keys', { name: 'escalate', scope: 'full' }],
        ['GET', `/keys/${reader.id}`, undefined],
        ['GET', `/keys/${owner.keyId}`, undefined],
        ['PATCH', `/keys/${reader.id}`, { name: 'renamed' }],
        ['DELETE', `/keys/${owner.keyId}`, undefined],
        ['DELETE', `/keys/${reader.id}`, undefined],
        ['POST', '/keys', '{not json'],
      ] as const) {
        const res = await t.app.inject({
          method,
          url: `${prefix}${url}`,
          headers: bearer(reader.secret),
          ...(payload ? { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) } : {}),
        });
        const body = expectError(res, 403, 'insufficient_scope');
        assert.match(body.error, /Only full keys manage API keys/);
        assert.equal(
          res.headers['www-authenticate'],
          'Bearer realm="pricehound", error="insufficient_scope", scope="full"',
        );
      }
    }
    assert.deepEqual(await rows(owner.accountId), before);
  });

  it('a read key may read, preview alerts and try extraction, and nothing else', async () => {
    const owner = await t.newKey('business');
    const reader = bearer((await create(owner.headers, { scope: 'read' })).secret);
    const product = await call('POST', '/products', owner.headers, { name: 'Kettle', base_price: 10, currency: 'EUR' });
    assert.equal(product.statusCode, 201);
    assert.equal((await call('GET', '/products', reader)).statusCode, 200);
    assert.equal(
      (
        await t.app.inject({
          method: 'HEAD',
          url: `/api/v1/products/${product.json<{ id: string }>().id}`,
          headers: reader,
        })
      ).statusCode,
      200,
    );
    assert.equal((await call('GET', '/usage', reader)).statusCode, 200);
    // The two POSTs that write nothing are let through (their own validation answers here).
    assert.notEqual((await call('POST', '/alerts/preview', reader, {})).statusCode, 403);
    assert.notEqual((await call('POST', '/extract', reader, {})).statusCode, 403);
    const res = await call('POST', '/products', reader, { name: 'Sneaky', base_price: 1, currency: 'EUR' });
    const body = expectError(res, 403, 'insufficient_scope');
    assert.match(body.error, /read scope/);
    assert.equal(
      res.headers['www-authenticate'],
      'Bearer realm="pricehound", error="insufficient_scope", scope="full"',
    );
    assert.ok(res.headers['x-ratelimit-limit'], 'rate-limit headers on the 403');
    const n = await t.rt.db.query<{ n: number }>('select count(*)::int as n from products where name = $1', ['Sneaky']);
    assert.equal(n.rows[0]!.n, 0);
  });

  it('last_used_at: shown at once by this process, written with the usage counts, not per request', async () => {
    const owner = await t.newKey('business');
    const k = await create(owner.headers);
    await t.rt.usage.flush();
    const stored = async () =>
      (await t.rt.db.query<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [k.id]))
        .rows[0]!.last_used_at;
    assert.equal(await stored(), null);
    const beforeUse = Date.now();
    for (let i = 0; i < 5; i++) assert.equal((await call('GET', '/products', bearer(k.secret))).statusCode, 200);
    assert.equal(await stored(), null, 'no write per request');
    const shown = (await call('GET', `/keys/${k.id}`, owner.headers)).json<ApiKeyMaybeSecret>().last_used_at;
    assert.ok(shown && Date.parse(shown) >= beforeUse - 1, `shown ${shown}`);
    // The caller's own key shows its use too (this very request).
    assert.ok((await call('GET', `/keys/${owner.keyId}`, owner.headers)).json<ApiKeyMaybeSecret>().last_used_at);
    await t.rt.usage.flush();
    assert.equal((await stored())?.toISOString(), shown, 'the flush writes the same instant');
    // An older use from another process never moves it back.
    await t.rt.db.query("update api_keys set last_used_at = now() + interval '1 hour' where id = $1", [k.id]);
    await call('GET', '/products', bearer(k.secret));
    await t.rt.usage.flush();
    assert.ok((await stored())!.getTime() > Date.now() + 30 * 60_000);
  });

  it("the operator's keys keep working: made before scopes, a key is full", async () => {
    // A key as the CLI makes it (no scope given) manages keys.
    const cli = await t.newKey('free');
    assert.equal((await call('GET', '/keys', cli.headers)).statusCode, 200);
    const listed = (await call('GET', '/keys', cli.headers)).json<Page<ApiKeyMaybeSecret>>().data;
    assert.deepEqual(
      listed.map((k) => [k.id, k.scope, k.plan]),
      [[cli.keyId, 'full', 'free']],
    );
  });
});

describe('API keys over HTTP: revocation reaches every process', () => {
  const t = useTestApp();

  it('a key revoked through one process is refused by another that had it cached', { timeout: 30_000 }, async (ctx) => {
    if (!usingPostgres()) {
      ctx.skip('embedded PGlite is single-process: the revoking process is the only one (tested above)');
      return;
    }
    const owner = await t.newKey('business');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/keys',
      headers: owner.headers,
      payload: { name: 'shared' },
    });
    const k = created.json<ApiKeyMaybeSecret & { secret: string }>();
    // A second API process on the same database, with its own key cache.
    const rt2 = await createRuntime(
      loadConfig({ AUTH_FAILURE_LIMIT: '100000', ...t.storage.env }),
      pino({ level: 'silent' }),
    );
    const app2 = await buildApp(rt2);
    try {
      await app2.ready();
      const get2 = () => app2.inject({ method: 'GET', url: '/api/v1/products', headers: bearer(k.secret) });
      assert.equal((await get2()).statusCode, 200); // cached in process 2
      const evicted = evictionOf(rt2.keys, k.id);
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/keys/${k.id}`, headers: owner.headers })).statusCode,
        200,
      );
      assert.equal(await evicted, k.id);
      assert.equal((await get2()).statusCode, 401);
    } finally {
      await app2.close();
      await rt2.close();
    }
  });
});
