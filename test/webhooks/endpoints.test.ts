import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError, PREFIXES } from '../products/support.js';
import { assertSecret, call, createWebhook, RECEIVER, WEBHOOK_KEYS, type Page, type WebhookJson } from './api-support.js';

/** /webhooks: endpoints and their secrets (docs/WEBHOOKS.md). */

const t = useTestApp({ ALLOW_LOOPBACK_TARGETS: 'true' });

describe('webhook endpoints: create, read, update, delete', () => {
  for (const prefix of PREFIXES) {
    it(`creates an endpoint with defaults and shows its secret only then, under ${prefix}`, async () => {
      const { headers } = await t.newKey();
      const res = await call(t, headers, 'POST', `${prefix}/webhooks`, { url: RECEIVER });
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json<WebhookJson>();
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
    const page = list.json<Page<WebhookJson>>();
    assert.deepEqual(page.data.map((w) => w.id), [b.id, a.id]);
    assert.doesNotMatch(list.body, /whsec_|"secret"/);
    for (const w of page.data) assert.deepEqual(Object.keys(w).sort(), WEBHOOK_KEYS);

    const oldest = await call(t, headers, 'GET', '/webhooks?sort=created_at&limit=1');
    const first = oldest.json<Page<WebhookJson>>();
    assert.deepEqual(first.data.map((w) => w.id), [a.id]);
    assert.equal(first.pagination.has_more, true);
    const next = await call(t, headers, 'GET', `/webhooks?sort=created_at&limit=1&cursor=${first.pagination.next_cursor}`);
    assert.deepEqual(next.json<Page<WebhookJson>>().data.map((w) => w.id), [b.id]);

    const enabled = await call(t, headers, 'GET', '/webhooks?enabled=true');
    assert.deepEqual(enabled.json<Page<WebhookJson>>().data.map((w) => w.id), [b.id]);
    const disabled = await call(t, headers, 'GET', '/webhooks?enabled=false');
    assert.deepEqual(disabled.json<Page<WebhookJson>>().data.map((w) => w.id), [a.id]);
    expectError(await call(t, headers, 'GET', '/webhooks?enabled=maybe'), 422, 'validation_failed');
    expectError(await call(t, headers, 'GET', '/webhooks?sort=url'), 422, 'validation_failed');
  });
});
