import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, PREFIXES } from '../products/support.js';
import { assertSecret, call, createWebhook, RECEIVER, WEBHOOK_KEYS, type Page } from './api-support.js';
import type { WebhookMaybeSecret } from '../helpers/api-types.js';

/** /webhooks: endpoints and their secrets (docs/WEBHOOKS.md). */

const t = useTestApp({ ALLOW_LOOPBACK_TARGETS: 'true' });

describe('webhook endpoints: create, read, update, delete', () => {
  for (const prefix of PREFIXES) {
    it(`creates an endpoint with defaults and shows its secret only then, under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const res = await call(t, headers, 'POST', `${prefix}/webhooks`, { url: RECEIVER });
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json<WebhookMaybeSecret>();
      assert.match(created.id, /^wh_[0-9a-z]{26}$/);
      assert.equal(res.headers.location, `${prefix}/webhooks/${created.id}`);
      assert.deepEqual(Object.keys(created).sort(), [...WEBHOOK_KEYS, 'secret'].sort());
      assert.equal(created.object, 'webhook');
      assert.equal(created.url, RECEIVER);
      assert.equal(created.description, null);
      assert.deepEqual(created.event_types, []);
      assert.equal(created.format, 'standard');
      assert.equal(created.enabled, true);
      assert.equal(created.disabled_reason, null);
      assert.equal(created.created_at, created.updated_at);
      assertSecret(created.secret);

      const got = await call(t, headers, 'GET', `${prefix}/webhooks/${created.id}`);
      assert.equal(got.statusCode, 200);
      const { secret: _secret, ...withoutSecret } = created;
      assert.deepEqual(got.json(), withoutSecret);
      assert.doesNotMatch(got.body, /whsec_/);
    });
  }

  it('takes every field, removes repeated event types and lists endpoints newest first without secrets', async () => {
    const { headers } = await t.newKey();
    const a = await createWebhook(t, headers, {
      description: 'Chat room',
      event_types: ['price.changed', 'stock.changed', 'price.changed'],
      format: 'slack',
      enabled: false,
    });
    assert.equal(a.description, 'Chat room');
    assert.deepEqual(a.event_types, ['price.changed', 'stock.changed']);
    assert.equal(a.format, 'slack');
    assert.equal(a.enabled, false);
    const b = await createWebhook(t, headers);
    assert.notEqual(a.secret, b.secret);

    const list = await call(t, headers, 'GET', '/webhooks');
    assert.equal(list.statusCode, 200);
    const page = list.json<Page<WebhookMaybeSecret>>();
    assert.deepEqual(
      page.data.map((w) => w.id),
      [b.id, a.id],
    );
    assert.doesNotMatch(list.body, /whsec_|"secret"/);
    for (const w of page.data) assert.deepEqual(Object.keys(w).sort(), WEBHOOK_KEYS);

    const oldest = await call(t, headers, 'GET', '/webhooks?sort=created_at&limit=1');
    const first = oldest.json<Page<WebhookMaybeSecret>>();
    assert.deepEqual(
      first.data.map((w) => w.id),
      [a.id],
    );
    assert.equal(first.pagination.has_more, true);
    const next = await call(
      t,
      headers,
      'GET',
      `/webhooks?sort=created_at&limit=1&cursor=${first.pagination.next_cursor}`,
    );
    assert.deepEqual(
      next.json<Page<WebhookMaybeSecret>>().data.map((w) => w.id),
      [b.id],
    );

    const enabled = await call(t, headers, 'GET', '/webhooks?enabled=true');
    assert.deepEqual(
      enabled.json<Page<WebhookMaybeSecret>>().data.map((w) => w.id),
      [b.id],
    );
    const disabled = await call(t, headers, 'GET', '/webhooks?enabled=false');
    assert.deepEqual(
      disabled.json<Page<WebhookMaybeSecret>>().data.map((w) => w.id),
      [a.id],
    );
    expectError(await call(t, headers, 'GET', '/webhooks?enabled=maybe'), 422, 'validation_failed');
    expectError(await call(t, headers, 'GET', '/webhooks?sort=url'), 422, 'validation_failed');
  });

  it('updates only the fields sent, with PUT and PATCH alike', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers, { description: 'Old', event_types: ['price.changed'] });
    const put = await call(t, headers, 'PUT', `/webhooks/${w.id}`, {
      description: 'New',
      event_types: ['alert.triggered', 'alert.triggered'],
    });
    assert.equal(put.statusCode, 200, put.body);
    const u = put.json<WebhookMaybeSecret>();
    assert.deepEqual(Object.keys(u).sort(), WEBHOOK_KEYS);
    assert.equal(u.description, 'New');
    assert.deepEqual(u.event_types, ['alert.triggered']);
    assert.equal(u.url, RECEIVER);
    assert.equal(u.format, 'standard');
    assert.ok(u.updated_at > w.updated_at);
    assert.equal(u.created_at, w.created_at);

    const patch = await call(t, headers, 'PATCH', `/webhooks/${w.id}`, {
      description: null,
      format: 'slack',
      url: 'http://127.0.0.1:8/other',
      event_types: [],
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const p = patch.json<WebhookMaybeSecret>();
    assert.equal(p.description, null);
    assert.equal(p.format, 'slack');
    assert.equal(p.url, 'http://127.0.0.1:8/other');
    assert.deepEqual(p.event_types, []);

    const nothing = await call(t, headers, 'PATCH', `/webhooks/${w.id}`, {});
    assert.equal(nothing.statusCode, 200);
    assert.deepEqual(nothing.json(), p);
    assert.doesNotMatch(nothing.body, /whsec_/);
  });

  it("the dashboard's toggle: PATCH {enabled}; enabling a disabled endpoint forgets why and that it was failing", async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    const off = await call(t, headers, 'PATCH', `/webhooks/${w.id}`, { enabled: false });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json<WebhookMaybeSecret>().enabled, false);
    assert.equal(off.json<WebhookMaybeSecret>().disabled_reason, null);

    // As the delivery worker leaves an endpoint it disabled (a 410 answer).
    await t.rt.db.query(
      `update webhook_endpoints set disabled_reason = 'The endpoint answered 410 Gone', failing_since = now(), probe_at = now() + interval '1 hour' where id = $1`,
      [w.id],
    );
    const seen = await call(t, headers, 'GET', `/webhooks/${w.id}`);
    assert.equal(seen.json<WebhookMaybeSecret>().disabled_reason, 'The endpoint answered 410 Gone');
    // Disabling again keeps the reason.
    await call(t, headers, 'PATCH', `/webhooks/${w.id}`, { enabled: false });
    assert.equal(
      (await call(t, headers, 'GET', `/webhooks/${w.id}`)).json<WebhookMaybeSecret>().disabled_reason,
      'The endpoint answered 410 Gone',
    );

    const on = await call(t, headers, 'PATCH', `/webhooks/${w.id}`, { enabled: true });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json<WebhookMaybeSecret>().enabled, true);
    assert.equal(on.json<WebhookMaybeSecret>().disabled_reason, null);
    const state = await t.rt.db.query<{ failing_since: Date | null; probe_at: Date | null }>(
      'select failing_since, probe_at from webhook_endpoints where id = $1',
      [w.id],
    );
    assert.deepEqual(state.rows[0], { failing_since: null, probe_at: null });

    // Enabling an endpoint that is enabled leaves the worker's failing state alone.
    await t.rt.db.query(`update webhook_endpoints set failing_since = now(), probe_at = now() where id = $1`, [w.id]);
    await call(t, headers, 'PATCH', `/webhooks/${w.id}`, { enabled: true });
    const kept = await t.rt.db.query<{ failing_since: Date | null }>(
      'select failing_since from webhook_endpoints where id = $1',
      [w.id],
    );
    assert.notEqual(kept.rows[0]!.failing_since, null);
  });

  it('deletes an endpoint with its pending deliveries', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    await call(t, headers, 'POST', '/products', { name: 'Kettle', base_price: 40, currency: 'EUR' });
    const queued = await t.rt.db.query<{ n: number | string }>(
      'select count(*) as n from webhook_deliveries where endpoint_id = $1',
      [w.id],
    );
    assert.equal(Number(queued.rows[0]!.n), 1, 'product.created was queued for the endpoint');
    const del = await call(t, headers, 'DELETE', `/webhooks/${w.id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    const left = await t.rt.db.query<{ n: number | string }>(
      'select count(*) as n from webhook_deliveries where endpoint_id = $1',
      [w.id],
    );
    assert.equal(Number(left.rows[0]!.n), 0);
    expectError(await call(t, headers, 'GET', `/webhooks/${w.id}`), 404, 'not_found');
    expectError(await call(t, headers, 'DELETE', `/webhooks/${w.id}`), 404, 'not_found');
  });
});

describe('webhook endpoints: secrets', () => {
  const stored = async (id: string) =>
    (
      await t.rt.db.query<{
        secret: string;
        previous_secret: string | null;
        previous_secret_expires_at: Date | string | null;
        now: Date | string;
      }>(
        'select secret, previous_secret, previous_secret_expires_at, now() as now from webhook_endpoints where id = $1',
        [id],
      )
    ).rows[0]!;

  it('rotates: a new secret in the answer, the old one signing beside it for 24 hours', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    // The dashboard sends an empty object.
    const res = await call(t, headers, 'POST', `/webhooks/${w.id}/rotate-secret`, {});
    assert.equal(res.statusCode, 200, res.body);
    const r = res.json<WebhookMaybeSecret>();
    assertSecret(r.secret);
    assert.notEqual(r.secret, w.secret);
    assert.deepEqual(Object.keys(r).sort(), [...WEBHOOK_KEYS, 'secret'].sort());
    const s = await stored(w.id);
    assert.equal(s.secret, r.secret);
    assert.equal(s.previous_secret, w.secret);
    const overlap = new Date(s.previous_secret_expires_at!).getTime() - new Date(s.now).getTime();
    assert.ok(Math.abs(overlap - 86_400_000) < 5_000, `overlap ${overlap} ms`);

    // Never shown again: not by GET, the list, nor any event.
    for (const url of [`/webhooks/${w.id}`, '/webhooks', '/events?limit=100']) {
      const body = (await call(t, headers, 'GET', url)).body;
      assert.doesNotMatch(body, /whsec_/, url);
    }
  });

  it('takes no body at all, or a shorter overlap; 0 retires the old secret at once; longer than allowed is a 422', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    const bare = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${w.id}/rotate-secret`,
      headers: { authorization: headers.authorization! },
    });
    assert.equal(bare.statusCode, 200, bare.body);
    const first = bare.json<WebhookMaybeSecret>().secret!;

    const short = await call(t, headers, 'POST', `/webhooks/${w.id}/rotate-secret`, { expire_previous_in_seconds: 60 });
    assert.equal(short.statusCode, 200, short.body);
    let s = await stored(w.id);
    assert.equal(s.previous_secret, first, 'only the secret just replaced keeps signing');
    const overlap = new Date(s.previous_secret_expires_at!).getTime() - new Date(s.now).getTime();
    assert.ok(Math.abs(overlap - 60_000) < 5_000, `overlap ${overlap} ms`);

    const now = await call(t, headers, 'POST', `/webhooks/${w.id}/rotate-secret`, { expire_previous_in_seconds: 0 });
    assert.equal(now.statusCode, 200, now.body);
    s = await stored(w.id);
    assert.equal(s.secret, now.json<WebhookMaybeSecret>().secret);
    assert.equal(s.previous_secret, null);
    assert.equal(s.previous_secret_expires_at, null);

    const before = await stored(w.id);
    for (const body of [
      { expire_previous_in_seconds: 86_401 },
      { expire_previous_in_seconds: -1 },
      { expire_previous_in_seconds: 1.5 },
      { expire_previous_in_seconds: '60' },
      { other: 1 },
    ]) {
      const e = expectError(
        await call(t, headers, 'POST', `/webhooks/${w.id}/rotate-secret`, body),
        422,
        'validation_failed',
      );
      assert.ok(e.details?.length, JSON.stringify(body));
    }
    const after = await stored(w.id);
    assert.deepEqual([after.secret, after.previous_secret], [before.secret, before.previous_secret], 'nothing changed');
    expectError(
      await call(t, headers, 'POST', '/webhooks/wh_0000000000000000000000000/rotate-secret', {}),
      404,
      'not_found',
    );
  });
});

describe('webhook endpoints: idempotent replays of their secrets', () => {
  const post = (headers: Record<string, string>, key: string, url: string, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { ...headers, 'idempotency-key': key },
      payload: payload as object,
    });
  const storedBodies = async (accountId: string) =>
    (
      await t.rt.db.query<{ key: string; body: string | null }>(
        'select key, body from idempotency_keys where account_id = $1 order by key',
        [accountId],
      )
    ).rows;

  it('keeps no secret in the idempotency store, replays it while the endpoint exists, and answers 404 once it is deleted', async () => {
    const { headers, accountId } = await t.newKey();
    const created = await post(headers, 'create-1', '/webhooks', { url: RECEIVER, description: 'Repricer' });
    assert.equal(created.statusCode, 201, created.body);
    const hook = created.json<WebhookMaybeSecret>();
    const rotated = await post(headers, 'rotate-1', `/webhooks/${hook.id}/rotate-secret`, {});
    assert.equal(rotated.statusCode, 200, rotated.body);
    const secret = rotated.json<WebhookMaybeSecret>().secret!;

    // A retry after a lost answer gets the answer back, secret included.
    const again = await post(headers, 'rotate-1', `/webhooks/${hook.id}/rotate-secret`, {});
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), rotated.json());

    // The store holds the answers sealed: neither secret, nor anything else of them, in plaintext.
    const rows = await storedBodies(accountId);
    assert.deepEqual(
      rows.map((r) => r.key),
      ['create-1', 'rotate-1'],
    );
    for (const { body } of rows) {
      assert.ok(body, 'an answer is stored');
      for (const plain of [
        'whsec_',
        secret.slice('whsec_'.length, 30),
        hook.secret!.slice('whsec_'.length, 30),
        hook.id,
        'Repricer',
      ]) {
        assert.ok(!body.includes(plain), `the stored answer shows ${plain}`);
      }
    }

    // Deleted: neither replay hands out a secret; each answers the endpoint's own 404.
    assert.equal((await call(t, headers, 'DELETE', `/webhooks/${hook.id}`)).statusCode, 204);
    for (const [key, url] of [
      ['rotate-1', `/webhooks/${hook.id}/rotate-secret`],
      ['create-1', '/webhooks'],
    ] as const) {
      const replay = await post(
        headers,
        key,
        url,
        url === '/webhooks' ? { url: RECEIVER, description: 'Repricer' } : {},
      );
      const e = expectError(replay, 404, 'not_found');
      assert.equal(e.error, 'Webhook not found', key);
      assert.deepEqual(e.details, [
        { field: 'Idempotency-Key', message: 'its stored answer is about a resource that no longer exists' },
      ]);
      assert.doesNotMatch(replay.body, /whsec_/);
      assert.equal(replay.headers['idempotent-replayed'], undefined);
    }
    // ... and the sealed answers are gone from the store.
    assert.deepEqual(
      (await storedBodies(accountId)).map((r) => r.body),
      [null, null],
    );
    // The key is still spent: a create with it does not run again.
    expectError(
      await post(headers, 'create-1', '/webhooks', { url: RECEIVER, description: 'Repricer' }),
      404,
      'not_found',
    );
    assert.equal((await call(t, headers, 'GET', '/webhooks')).json<Page<WebhookMaybeSecret>>().data.length, 0);
  });

  it("a sealed answer that does not open (another row's, tampered) is a 409, never sent", async () => {
    const { headers, accountId } = await t.newKey();
    const other = await t.newKey();
    const mine = await post(headers, 'k', '/webhooks', { url: RECEIVER });
    assert.equal(mine.statusCode, 201);
    const theirs = await post(other.headers, 'k', '/webhooks', { url: RECEIVER });
    assert.equal(theirs.statusCode, 201);
    // Their sealed answer copied into my row: sealed for their row, it does not open in mine.
    await t.rt.db.query(
      `update idempotency_keys set body = (select body from idempotency_keys where account_id = $2 and key = 'k') where account_id = $1 and key = 'k'`,
      [accountId, other.accountId],
    );
    const replay = await post(headers, 'k', '/webhooks', { url: RECEIVER });
    expectError(replay, 409, 'conflict');
    assert.doesNotMatch(replay.body, /whsec_/);
  });
});
