import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { useTestApp } from '../helpers/app.js';
import { assertDocumentedEvents } from '../events/documented.js';
import { startReceiver, type Receiver } from './receiver.js';
import {
  attempted,
  attempts,
  createEndpoint,
  createProduct,
  createProducts,
  DELIVERY_ENV,
  retire,
  startWorker,
} from './delivery-support.js';
import type { AnyEvent } from '../helpers/api-types.js';

/**
 * What a failing receiver gets, and what becomes of the endpoint (docs/WEBHOOKS.md,
 * "Delivery"): retries on the schedule and never before Retry-After, a backlog that waits behind
 * one probe while the receiver is down, no redirects, a timeout, and disabling on 410 or after
 * WEBHOOK_DISABLE_AFTER without a success.
 */

const t = useTestApp(DELIVERY_ENV);
const T = { timeout: 90_000 };

async function accountEvents(headers: Record<string, string>, type: string): Promise<AnyEvent[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/events?type=${type}&limit=100`, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: AnyEvent[] }>().data;
}

async function endpointRow(id: string) {
  const r = await t.rt.db.query<{ enabled: boolean; disabled_reason: string | null; failing_since: Date | null }>(
    `select enabled, disabled_reason, failing_since from webhook_endpoints where id = $1`,
    [id],
  );
  return r.rows[0]!;
}

describe('webhook delivery when the receiver fails', () => {
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close();
  });

  it(
    'receiver down while 100 events are created, then up: all 100 arrive once each, in order; while down only probes went out',
    T,
    async () => {
      rx.received.length = 0;
      rx.answer = () => ({ status: 200 });
      const key = await t.newKey();
      const ep = await createEndpoint(t, key, { url: rx.url });
      await rx.down();
      // A schedule long enough not to run out while the receiver is down.
      const worker = await startWorker(t, { webhookRetrySchedule: Array.from({ length: 30 }, () => 50) });
      try {
        const firstFailure = attempted(worker, (o) => o.endpointId === ep.id && !o.succeeded);
        let successes = 0;
        const allRecorded = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded && ++successes === 100);
        const ids = await createProducts(t, key.headers, 100);
        await firstFailure;
        // Some probes fail while it is down.
        await attempted(worker, (o) => o.endpointId === ep.id && !o.succeeded);
        await attempted(worker, (o) => o.endpointId === ep.id && !o.succeeded);
        await rx.listen();
        await allRecorded;
        const got = rx.received.map((r) => JSON.parse(r.body) as AnyEvent);
        assert.deepEqual(
          got.map((e) => e.data.id),
          ids,
          'every product.created arrived once, in the order of creation',
        );
        assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 100);
        const log = await attempts(t.rt.db, ep.id);
        const failed = log.filter((a) => a.status === 'failed');
        assert.ok(failed.length >= 3, `${failed.length} probes failed`);
        assert.ok(
          failed.every((a) => a.event_id === got[0]!.id),
          'every failed attempt was the probe: the oldest event',
        );
        assert.ok(
          failed.every((a) => a.error === 'connection refused'),
          failed.map((a) => a.error).join(', '),
        );
        assert.equal(log.filter((a) => a.status === 'succeeded').length, 100);
        assert.equal(log.filter((a) => a.status === 'pending').length, 0);
        // The backlog waited: every other event was tried once.
        assert.equal(log.length, 100 + failed.length);
        assert.equal((await endpointRow(ep.id)).failing_since, null);
      } finally {
        await worker.halt();
        await retire(t, key.accountId);
      }
    },
  );

  it(
    '410 disables the endpoint at once and records endpoint.disabled; its pending attempts stay pending',
    T,
    async () => {
      rx.received.length = 0;
      // Gone at the endpoint under test only: a watcher answering 410 too would be disabled in
      // turn when its delivery came first, a second endpoint.disabled (seen in CI).
      rx.answer = (r) => (r.path.endsWith('/watcher') ? { status: 204 } : { status: 410 });
      const key = await t.newKey();
      const ep = await createEndpoint(t, key, { url: rx.url, event_types: ['product.created'] });
      const watcher = await createEndpoint(t, key, { url: `${rx.url}/watcher`, event_types: ['endpoint.disabled'] });
      // Both events before the worker starts: with it running, a loaded machine delivered the
      // first (410, disabled) before the second was made, which then had no attempt at all.
      await createProduct(t, key.headers);
      await createProduct(t, key.headers);
      const worker = await startWorker(t);
      try {
        const disabled = attempted(worker, (o) => o.endpointId === ep.id && o.disabled !== undefined);
        const o = await disabled;
        assert.equal(o.status, 410);
        const row = await endpointRow(ep.id);
        assert.equal(row.enabled, false);
        assert.equal(row.disabled_reason, 'The endpoint answered 410 Gone');
        const events = await accountEvents(key.headers, 'endpoint.disabled');
        assert.equal(events.length, 1);
        assert.equal(events[0]!.data.id, ep.id);
        assert.equal(events[0]!.data.object, 'webhook');
        assert.equal(events[0]!.data.enabled, false);
        assert.equal(events[0]!.data.disabled_reason, 'The endpoint answered 410 Gone');
        assert.ok(!('secret' in events[0]!.data) && !JSON.stringify(events[0]!.data).includes('whsec_'));
        await assertDocumentedEvents(t.app, events);
        // The other endpoint of the account hears of it.
        await rx.until((r) => r.some((x) => x.body.includes('endpoint.disabled')));
        void watcher;
        const log = await attempts(t.rt.db, ep.id);
        assert.deepEqual(
          log.map((a) => [a.attempt, a.status, a.response_status]),
          [
            [1, 'failed', 410],
            [1, 'pending', null], // the second event's
            [2, 'pending', null], // the first event's retry
          ],
        );
        assert.equal(
          rx.received.filter((r) => !r.body.includes('endpoint.disabled')).length,
          1,
          'nothing more was sent to it',
        );
        // Enabled again, its backlog goes out, in order.
        rx.answer = () => ({ status: 200 });
        let n = 0;
        const resumed = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded && ++n === 2);
        const patch = await t.app.inject({
          method: 'PATCH',
          url: `/api/v1/webhooks/${ep.id}`,
          headers: key.headers,
          payload: { enabled: true },
        });
        assert.equal(patch.statusCode, 200, patch.body);
        await resumed;
        const sent = rx.received
          .filter((r) => !r.body.includes('endpoint.disabled'))
          .map((r) => r.headers['webhook-id']);
        assert.deepEqual(sent, [log[0]!.event_id, log[0]!.event_id, log[1]!.event_id]);
      } finally {
        await worker.halt();
        await retire(t, key.accountId);
      }
    },
  );

  it(
    'endpoint.disabled shows the URL with its query redacted: a token in it reaches no other receiver',
    T,
    async () => {
      rx.received.length = 0;
      rx.answer = (r) => (r.path.includes('token=') ? { status: 410 } : { status: 204 });
      const key = await t.newKey();
      const url = `${rx.url}/in?token=s3cr3t-t0ken&x=1#frag`;
      const ep = await createEndpoint(t, key, { url, event_types: ['product.created'] });
      await createEndpoint(t, key, { url: `${rx.url}/watcher`, event_types: ['endpoint.disabled'] });
      await createEndpoint(t, key, { url: `${rx.url}/chat`, event_types: ['endpoint.disabled'], format: 'slack' });
      const worker = await startWorker(t);
      try {
        const disabled = attempted(worker, (o) => o.endpointId === ep.id && o.disabled !== undefined);
        await createProduct(t, key.headers);
        await disabled;
        const [event] = await accountEvents(key.headers, 'endpoint.disabled');
        assert.equal(event?.data.id, ep.id);
        assert.equal(event.data.url, `${rx.url}/in?REDACTED`);
        await rx.until((r) => r.filter((x) => x.body.includes('endpoint.disabled')).length >= 2);
        for (const r of rx.received.filter((x) => !x.path.includes('token=')))
          assert.doesNotMatch(r.body, /s3cr3t|frag/, r.path);
        // The endpoint itself still shows its whole URL to the account.
        const got = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${ep.id}`, headers: key.headers });
        assert.equal(got.json<{ url: string }>().url, url);
      } finally {
        await worker.halt();
        await retire(t, key.accountId);
      }
    },
  );

  it('an endpoint failing without a success for WEBHOOK_DISABLE_AFTER is disabled', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 500 });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t, {
      webhookDisableAfterMs: 300,
      webhookRetrySchedule: Array.from({ length: 30 }, () => 60),
    });
    try {
      const disabled = attempted(worker, (o) => o.endpointId === ep.id && o.disabled !== undefined);
      await createProduct(t, key.headers);
      const o = await disabled;
      assert.equal(o.disabled, 'No successful delivery for 300 ms');
      const log = await attempts(t.rt.db, ep.id);
      const made = log.filter((a) => a.status === 'failed');
      assert.ok(made.length >= 2, `${made.length} attempts before it was disabled`);
      const span = made.at(-1)!.attempted_at!.getTime() - made[0]!.attempted_at!.getTime();
      assert.ok(span >= 290, `disabled after ${span} ms of failures`);
      assert.equal((await endpointRow(ep.id)).enabled, false);
      assert.equal((await accountEvents(key.headers, 'endpoint.disabled')).length, 1);
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('a Retry-After answer is honoured: the retry waits for it, not for the schedule', T, async () => {
    rx.received.length = 0;
    rx.answer = (_r, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t);
    try {
      const failed = attempted(worker, (o) => o.endpointId === ep.id && !o.succeeded);
      const delivered = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded);
      await createProduct(t, key.headers);
      assert.equal((await failed).retryInMs, 1000);
      await delivered;
      const gap = rx.received[1]!.at - rx.received[0]!.at;
      assert.ok(gap >= 950, `the retry came ${gap} ms later (schedule: 40 ms, Retry-After: 1 s)`);
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('a redirect is not followed: the 3xx is a failed attempt', T, async () => {
    rx.received.length = 0;
    rx.answer = (r) =>
      r.body.startsWith('{') && rx.received.length === 1
        ? { status: 307, headers: { location: `${rx.url}/elsewhere` } }
        : { status: 200 };
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t);
    try {
      const first = attempted(worker, (o) => o.endpointId === ep.id);
      const delivered = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded);
      await createProduct(t, key.headers);
      const o = await first;
      assert.equal(o.succeeded, false);
      assert.equal(o.status, 307);
      await delivered; // the retry, to the same URL
      assert.equal(rx.received.length, 2);
      assert.ok(rx.received.every((r) => r.headers.host === `127.0.0.1:${rx.port}`));
      const log = await attempts(t.rt.db, ep.id);
      assert.deepEqual(
        log.map((a) => [a.status, a.response_status]),
        [
          ['failed', 307],
          ['succeeded', 200],
        ],
      );
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('a receiver slower than WEBHOOK_TIMEOUT fails the attempt with a timeout', T, async () => {
    rx.received.length = 0;
    rx.answer = (_r, n) => (n === 1 ? 'hang' : { status: 200 });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t, { webhookTimeoutMs: 300 });
    try {
      const first = attempted(worker, (o) => o.endpointId === ep.id);
      const delivered = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded);
      await createProduct(t, key.headers);
      assert.equal((await first).succeeded, false);
      await delivered;
      const [timedOut] = await attempts(t.rt.db, ep.id);
      assert.equal(timedOut!.status, 'failed');
      assert.equal(timedOut!.response_status, null);
      assert.equal(timedOut!.error, 'timeout: no complete answer within 300 ms');
      assert.ok(timedOut!.duration_ms! >= 290 && timedOut!.duration_ms! < 2000, `${timedOut!.duration_ms} ms`);
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('keeps only the first 1 KB of a long answer', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 500, body: 'é'.repeat(600) + 'x'.repeat(100_000) });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t);
    try {
      const first = attempted(worker, (o) => o.endpointId === ep.id);
      await createProduct(t, key.headers);
      await first;
      const [a] = await attempts(t.rt.db, ep.id);
      assert.equal(a!.response_status, 500);
      assert.equal(a!.response_body, 'é'.repeat(512), 'at most 1024 bytes, whole characters');
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });
});
