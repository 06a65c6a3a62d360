import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { expectError } from '../products/support.js';
import { call, createWebhook, type Headers, type Page } from './api-support.js';
import type { AnyEvent, WebhookDelivery } from '../helpers/api-types.js';

/**
 * The API side of delivery: the test event, the delivery log and redelivery. No delivery worker
 * runs in this app, so queued attempts stay pending; where a test needs a failed attempt it
 * records one as the worker would.
 */

const t = useTestApp({ ALLOW_LOOPBACK_TARGETS: 'true' });

const DELIVERY_KEYS = [
  'attempt',
  'created_at',
  'duration_ms',
  'error',
  'event_id',
  'event_type',
  'id',
  'next_attempt_at',
  'response_body',
  'response_status',
  'status',
  'trigger',
].sort();

async function deliveries(headers: Headers, id: string, query = ''): Promise<WebhookDelivery[]> {
  const res = await call(t, headers, 'GET', `/webhooks/${id}/deliveries?limit=100${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Page<WebhookDelivery>>().data;
}

/** Records the outcome of a pending attempt, as the delivery worker does. */
async function finish(
  deliveryId: string,
  status: 'failed' | 'succeeded',
  responseStatus: number | null,
  body: string | null,
  error: string | null = null,
) {
  await t.rt.db.query(
    `update webhook_deliveries set status = $2, response_status = $3, response_body = $4, error = $5, duration_ms = 12,
            attempted_at = now(), next_attempt_at = null where id = $1`,
    [deliveryId, status, responseStatus, body, error],
  );
}

async function newProduct(headers: Headers, name: string): Promise<void> {
  const res = await call(t, headers, 'POST', '/products', { name, base_price: 10, currency: 'EUR' });
  assert.equal(res.statusCode, 201, res.body);
}

describe('POST /webhooks/{id}/test', () => {
  it('records a webhook.test event, queues it for this endpoint only and answers 202 with the event', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers, { event_types: ['price.changed'] });
    const other = await createWebhook(t, headers);
    // The dashboard sends no body, with an Idempotency-Key.
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${w.id}/test`,
      headers: { authorization: headers.authorization!, 'idempotency-key': 'test-1' },
    });
    assert.equal(res.statusCode, 202, res.body);
    const event = res.json<AnyEvent>();
    assert.match(event.id, /^evt_/);
    assert.equal(event.type, 'webhook.test');
    assert.equal(event.data.object, 'webhook_test');
    assert.equal(event.data.webhook_id, w.id);
    assert.equal(typeof event.data.message, 'string');
    assert.doesNotMatch(res.body, /whsec_/);

    const listed = await call(t, headers, 'GET', '/events?type=webhook.test');
    assert.deepEqual(listed.json<Page<AnyEvent>>().data, [event]);
    assert.deepEqual((await call(t, headers, 'GET', `/events/${event.id}`)).json(), event);

    const log = await deliveries(headers, w.id);
    assert.equal(log.length, 1);
    const d = log[0]!;
    assert.deepEqual(Object.keys(d).sort(), DELIVERY_KEYS);
    assert.match(d.id, /^whdl_/);
    assert.deepEqual(
      {
        event_id: d.event_id,
        event_type: d.event_type,
        attempt: d.attempt,
        status: d.status,
        trigger: d.trigger,
        response_status: d.response_status,
      },
      {
        event_id: event.id,
        event_type: 'webhook.test',
        attempt: 1,
        status: 'pending',
        trigger: 'scheduled',
        response_status: null,
      },
    );
    assert.ok(d.next_attempt_at);
    assert.deepEqual(await deliveries(headers, other.id), [], 'only the endpoint tested');

    // A retry with the same key replays the answer and queues nothing more.
    const again = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${w.id}/test`,
      headers: { authorization: headers.authorization!, 'idempotency-key': 'test-1' },
    });
    assert.equal(again.statusCode, 202);
    assert.deepEqual(again.json(), event);
    assert.equal((await deliveries(headers, w.id)).length, 1);

    const custom = await call(t, headers, 'POST', `/webhooks/${w.id}/test`, { message: 'hello <b>there</b>' });
    assert.equal(custom.statusCode, 202, custom.body);
    assert.equal(custom.json<AnyEvent>().data.message, 'hello <b>there</b>');
  });

  it('refuses a disabled endpoint with 409 and records nothing; bad bodies are 422', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers, { enabled: false });
    expectError(await call(t, headers, 'POST', `/webhooks/${w.id}/test`, {}), 409, 'conflict');
    expectError(await call(t, headers, 'POST', `/webhooks/${w.id}/test`, { msg: 'x' }), 422, 'validation_failed');
    expectError(await call(t, headers, 'POST', `/webhooks/${w.id}/test`, { message: 5 }), 422, 'validation_failed');
    expectError(await call(t, headers, 'POST', '/webhooks/wh_0000000000000000000000000/test', {}), 404, 'not_found');
    const events = await call(t, headers, 'GET', '/events?type=webhook.test');
    assert.deepEqual(events.json<Page<AnyEvent>>().data, []);
    assert.deepEqual(await deliveries(headers, w.id), []);
  });
});

describe('GET /webhooks/{id}/deliveries', () => {
  it('lists one row per attempt, newest first, with the answer cut to 1 KB, filtered by status and event', async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    await newProduct(headers, 'One');
    await newProduct(headers, 'Two');
    await newProduct(headers, 'Three');
    const log = await deliveries(headers, w.id);
    assert.deepEqual(
      log.map((d) => [d.event_type, d.attempt, d.status, d.trigger]),
      [
        ['product.created', 1, 'pending', 'scheduled'],
        ['product.created', 1, 'pending', 'scheduled'],
        ['product.created', 1, 'pending', 'scheduled'],
      ],
    );
    const events = (await call(t, headers, 'GET', '/events?sort=-created_at')).json<Page<AnyEvent>>().data;
    assert.deepEqual(
      log.map((d) => d.event_id),
      events.map((e) => e.id),
      'newest first',
    );

    await finish(log[2]!.id, 'failed', 500, 'x'.repeat(3000));
    await finish(log[1]!.id, 'failed', null, null, 'timeout');
    await finish(log[0]!.id, 'succeeded', 200, 'ok');
    const done = await deliveries(headers, w.id);
    assert.equal(done[2]!.response_body!.length, 1024);
    assert.equal(done[2]!.response_status, 500);
    assert.equal(done[2]!.duration_ms, 12);
    assert.equal(done[1]!.error, 'timeout');
    assert.equal(done[1]!.response_status, null);
    assert.equal(done[0]!.next_attempt_at, null);

    assert.deepEqual(
      (await deliveries(headers, w.id, '&status=failed')).map((d) => d.id),
      [log[1]!.id, log[2]!.id],
    );
    assert.deepEqual(
      (await deliveries(headers, w.id, '&status=succeeded')).map((d) => d.id),
      [log[0]!.id],
    );
    assert.deepEqual(await deliveries(headers, w.id, '&status=pending'), []);
    assert.deepEqual(
      (await deliveries(headers, w.id, `&event_id=${log[1]!.event_id}`)).map((d) => d.id),
      [log[1]!.id],
    );
    assert.deepEqual(
      (await deliveries(headers, w.id, '&sort=created_at')).map((d) => d.id),
      [log[2]!.id, log[1]!.id, log[0]!.id],
    );

    const first = await call(t, headers, 'GET', `/webhooks/${w.id}/deliveries?limit=2`);
    const page = first.json<Page<WebhookDelivery>>();
    assert.equal(page.pagination.has_more, true);
    const rest = await call(
      t,
      headers,
      'GET',
      `/webhooks/${w.id}/deliveries?limit=2&cursor=${page.pagination.next_cursor}`,
    );
    assert.deepEqual(
      [...page.data, ...rest.json<Page<WebhookDelivery>>().data].map((d) => d.id),
      log.map((d) => d.id),
    );

    for (const q of [
      'status=done',
      'event_id=prod_1',
      'limit=0',
      'limit=101',
      'sort=attempt',
      'cursor=%00',
      'extra=1',
    ]) {
      const r = await call(t, headers, 'GET', `/webhooks/${w.id}/deliveries?${q}`);
      assert.ok(r.statusCode === 422 || r.statusCode === 400, `${q}: ${r.statusCode} ${r.body}`);
    }
  });
});

describe('POST /webhooks/{id}/redeliver', () => {
  it("queues one event again as a manual attempt after its last, visible in the log (the dashboard's Redeliver button)", async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    await newProduct(headers, 'One');
    const [first] = await deliveries(headers, w.id);
    await finish(first!.id, 'succeeded', 200, 'ok');
    const res = await call(t, headers, 'POST', `/webhooks/${w.id}/redeliver`, { event_id: first!.event_id });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { queued: 1 });
    const log = await deliveries(headers, w.id);
    assert.deepEqual(
      log.map((d) => [d.event_id, d.attempt, d.status, d.trigger]),
      [
        [first!.event_id, 2, 'pending', 'manual'],
        [first!.event_id, 1, 'succeeded', 'scheduled'],
      ],
    );
    assert.ok(Date.parse(log[0]!.next_attempt_at!) <= Date.now() + 1000, 'due now');

    // Any event of the account, even one never sent to this endpoint (it was created before it).
    const later = await createWebhook(t, headers);
    const again = await call(t, headers, 'POST', `/webhooks/${later.id}/redeliver`, { event_id: first!.event_id });
    assert.deepEqual(again.json(), { queued: 1 });
    assert.deepEqual(
      (await deliveries(headers, later.id)).map((d) => [d.attempt, d.trigger]),
      [[1, 'manual']],
    );
  });

  it("replays every event in a range whose latest attempt failed (the dashboard's range form)", async () => {
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    const since = new Date(Date.now() - 1000).toISOString();
    for (const name of ['A', 'B', 'C', 'D']) await newProduct(headers, name);
    const [d, c, b, a] = await deliveries(headers, w.id);
    await finish(a!.id, 'failed', 500, 'boom'); // failed: replayed
    await finish(b!.id, 'succeeded', 200, 'ok'); // succeeded: not
    await finish(c!.id, 'failed', null, null, 'refused'); // failed, then retried: its latest attempt decides
    await t.rt.db.query(
      `insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, status, next_attempt_at)
       select 'whdl_retry' || id, account_id, endpoint_id, event_id, event_seq, event_created_at, 2, 'pending', now()
         from webhook_deliveries where id = $1`,
      [c!.id],
    );
    // d stays pending: not replayed.
    const until = new Date(Date.now() + 1000).toISOString();
    const res = await call(t, headers, 'POST', `/webhooks/${w.id}/redeliver`, { since, until });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { queued: 1 });
    const manual = await deliveries(headers, w.id, '&status=pending');
    assert.deepEqual(
      manual.filter((x) => x.trigger === 'manual').map((x) => [x.event_id, x.attempt]),
      [[a!.event_id, 2]],
    );
    assert.ok(manual.some((x) => x.event_id === d!.event_id && x.trigger === 'scheduled'));

    // The same range again: a's latest attempt is now the pending manual one.
    const twice = await call(t, headers, 'POST', `/webhooks/${w.id}/redeliver`, { since, until });
    assert.deepEqual(twice.json(), { queued: 0 });
    const empty = await call(t, headers, 'POST', `/webhooks/${w.id}/redeliver`, {
      since: '2026-01-01T00:00:00Z',
      until: '2026-01-02T00:00:00Z',
    });
    assert.deepEqual(empty.json(), { queued: 0 });
  });

  it("takes exactly one form, a range of at most 30 days, and only the account's own events", async () => {
    const owner = await t.newKey();
    const other = await t.newKey();
    const w = await createWebhook(t, owner.headers);
    await newProduct(other.headers, 'Theirs');
    const theirs = (await call(t, other.headers, 'GET', '/events')).json<Page<AnyEvent>>().data[0]!;
    const bad: [unknown, string][] = [
      [{}, 'event_id'],
      [{ event_id: theirs.id, since: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' }, 'event_id'],
      [{ since: '2026-01-01T00:00:00Z' }, 'until'],
      [{ until: '2026-01-01T00:00:00Z' }, 'since'],
      [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'since'],
      [{ since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'since'],
      [{ since: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00Z' }, 'until'],
      [{ since: 'yesterday', until: '2026-01-01T00:00:00Z' }, 'since'],
      [{ event_id: 'prod_123' }, 'event_id'],
      [{ event_id: 42 }, 'event_id'],
      [{ event_id: theirs.id, extra: true }, 'extra'],
    ];
    for (const [body, field] of bad) {
      const e = expectError(
        await call(t, owner.headers, 'POST', `/webhooks/${w.id}/redeliver`, body),
        422,
        'validation_failed',
      );
      assert.ok(
        e.details?.some((d) => d.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(e.details)}`,
      );
    }
    // Exactly 30 days is allowed.
    const month = await call(t, owner.headers, 'POST', `/webhooks/${w.id}/redeliver`, {
      since: '2026-01-01T00:00:00Z',
      until: '2026-01-31T00:00:00Z',
    });
    assert.equal(month.statusCode, 202, month.body);
    expectError(
      await call(t, owner.headers, 'POST', `/webhooks/${w.id}/redeliver`, { event_id: theirs.id }),
      404,
      'not_found',
    );
    expectError(
      await call(t, owner.headers, 'POST', `/webhooks/${w.id}/redeliver`, {
        event_id: 'evt_0000000000000000000000000',
      }),
      404,
      'not_found',
    );
    expectError(
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${w.id}/redeliver`,
        headers: owner.headers,
        payload: '{',
      }),
      400,
      'invalid_json',
    );
    assert.deepEqual(await deliveries(owner.headers, w.id), [], 'nothing queued');

    const off = await createWebhook(t, owner.headers, { enabled: false });
    await newProduct(owner.headers, 'Mine');
    const mine = (await call(t, owner.headers, 'GET', '/events?type=product.created')).json<Page<AnyEvent>>().data[0]!;
    expectError(
      await call(t, owner.headers, 'POST', `/webhooks/${off.id}/redeliver`, { event_id: mine.id }),
      409,
      'conflict',
    );
  });
});
