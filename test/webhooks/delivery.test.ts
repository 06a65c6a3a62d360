import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { useTestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from './receiver.js';
import {
  attempted,
  attempts,
  type body,
  createEndpoint,
  createProduct,
  DELIVERY_ENV,
  newSecret,
  retire,
  startWorker,
} from './delivery-support.js';

/**
 * Delivery (docs/WEBHOOKS.md, "Delivery"): what a receiver on 127.0.0.1 gets, signed as
 * Standard Webhooks says (checked by the `standardwebhooks` package, not by our own code), and
 * what the delivery log says about every attempt.
 */

const t = useTestApp(DELIVERY_ENV);
const T = { timeout: 60_000 };

describe('webhook delivery', () => {
  let rx: Receiver;
  before(async () => {
    rx = await startReceiver();
  });
  after(async () => {
    await rx?.close();
  });

  it('sends the event envelope with Standard Webhooks headers that the reference library verifies', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 200, body: 'ok' });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const worker = await startWorker(t);
    const delivered = attempted(worker, (o) => o.endpointId === ep.id);
    try {
      const productId = await createProduct(t, key.headers, 'Kettle "deluxe" <b>');
      await rx.until((r) => r.length >= 1);
      const got = rx.received[0]!;
      assert.equal(got.headers['content-type'], 'application/json');
      assert.match(String(got.headers['user-agent']), /^pricehound\//);
      const verified = new Webhook(ep.secret).verify(got.body, got.headers as Record<string, string>) as ReturnType<
        typeof body
      >;
      assert.equal(verified.type, 'product.created');
      assert.equal(verified.data.id, productId);
      assert.deepEqual(Object.keys(verified), ['id', 'type', 'created_at', 'data']);
      assert.equal(got.headers['webhook-id'], verified.id);
      assert.ok(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      // The envelope is the event as /events shows it.
      const ev = await t.app.inject({ method: 'GET', url: `/api/v1/events/${verified.id}`, headers: key.headers });
      assert.deepEqual(ev.json(), verified);
      // A signature by another secret does not verify (the check can fail).
      assert.throws(() => new Webhook(newSecret()).verify(got.body, got.headers as Record<string, string>));
      await delivered;
      const log = await attempts(t.rt.db, ep.id);
      assert.equal(log.length, 1);
      assert.equal(log[0]!.status, 'succeeded');
      assert.equal(log[0]!.response_status, 200);
      assert.equal(log[0]!.response_body, 'ok');
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('during a rotation signs with both secrets: the old one and the new one each verify alone', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 204 });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url });
    const old = ep.secret;
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${ep.id}/rotate-secret`,
      headers: key.headers,
      payload: {},
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const fresh = rotated.json<{ secret: string }>().secret;
    assert.notEqual(fresh, old);
    const worker = await startWorker(t);
    try {
      await createProduct(t, key.headers);
      await rx.until((r) => r.length >= 1);
      const got = rx.received[0]!;
      const sigs = String(got.headers['webhook-signature']).split(' ');
      assert.equal(sigs.length, 2);
      for (const secret of [old, fresh]) {
        assert.equal(
          (new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string }).type,
          'product.created',
        );
      }
      // Past the overlap only the new secret signs.
      await t.rt.db.query(
        `update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = $1`,
        [ep.id],
      );
      await createProduct(t, key.headers);
      await rx.until((r) => r.length >= 2);
      const later = rx.received[1]!;
      assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
      new Webhook(fresh).verify(later.body, later.headers as Record<string, string>);
      assert.throws(() => new Webhook(old).verify(later.body, later.headers as Record<string, string>));
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it(
    '500 three times then 200: one event delivered, four attempts logged, the same webhook-id on each',
    T,
    async () => {
      rx.received.length = 0;
      rx.answer = (_r, n) => (n <= 3 ? { status: 500, body: `boom ${n}` } : { status: 200 });
      const key = await t.newKey();
      const ep = await createEndpoint(t, key, { url: rx.url });
      const worker = await startWorker(t);
      try {
        const delivered = attempted(worker, (o) => o.endpointId === ep.id && o.succeeded);
        await createProduct(t, key.headers);
        await delivered;
        const res = await t.app.inject({
          method: 'GET',
          url: `/api/v1/webhooks/${ep.id}/deliveries?sort=created_at`,
          headers: key.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        const log = res.json<{
          data: {
            attempt: number;
            status: string;
            response_status: number | null;
            trigger: string;
            event_id: string;
            response_body: string | null;
          }[];
        }>().data;
        assert.deepEqual(
          log.map((a) => [a.attempt, a.status, a.response_status, a.trigger]),
          [
            [1, 'failed', 500, 'scheduled'],
            [2, 'failed', 500, 'scheduled'],
            [3, 'failed', 500, 'scheduled'],
            [4, 'succeeded', 200, 'scheduled'],
          ],
        );
        assert.equal(log[0]!.response_body, 'boom 1');
        assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1);
        assert.equal(new Set(log.map((a) => a.event_id)).size, 1);
        // The retries waited the schedule (40 ms each, no jitter).
        for (let i = 1; i < 4; i++) assert.ok(rx.received[i]!.at - rx.received[i - 1]!.at >= 35, `retry ${i} waited`);
        const [endpoint] = (
          await t.rt.db.query<{ failing_since: Date | null; last_success_at: Date | null }>(
            `select failing_since, last_success_at from webhook_endpoints where id = $1`,
            [ep.id],
          )
        ).rows;
        assert.equal(endpoint!.failing_since, null);
        assert.ok(endpoint!.last_success_at);
      } finally {
        await worker.halt();
        await retire(t, key.accountId);
      }
    },
  );

  it('a slack endpoint gets one line of text, escaped as Slack asks, signed all the same', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 200 });
    const key = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url, format: 'slack' });
    const worker = await startWorker(t);
    try {
      await createProduct(t, key.headers, 'Kettle\nwith a second line');
      await rx.until((r) => r.length >= 1);
      const got = rx.received[0]!;
      const verified = new Webhook(ep.secret).verify(got.body, got.headers as Record<string, string>) as Record<
        string,
        unknown
      >;
      assert.deepEqual(Object.keys(verified), ['text']);
      assert.equal(verified.text, 'pricehound product.created: Kettle with a second line');
      // User text cannot ping a channel or disguise a link: &, < and > are escaped.
      await createProduct(t, key.headers, '<!channel> Tea & <https://evil.example/login|your bank> &amp; <@U123>');
      await rx.until((r) => r.length >= 2);
      const { text } = JSON.parse(rx.received[1]!.body) as { text: string };
      assert.equal(
        text,
        'pricehound product.created: &lt;!channel&gt; Tea &amp; &lt;https://evil.example/login|your bank&gt; &amp;amp; &lt;@U123&gt;',
      );
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });

  it('an endpoint gets only the event types it asked for, and none of another account', T, async () => {
    rx.received.length = 0;
    rx.answer = () => ({ status: 200 });
    const key = await t.newKey();
    const other = await t.newKey();
    const ep = await createEndpoint(t, key, { url: rx.url, event_types: ['product.deleted'] });
    const worker = await startWorker(t);
    try {
      const id = await createProduct(t, key.headers);
      await createProduct(t, other.headers);
      const delivered = attempted(worker, (o) => o.endpointId === ep.id);
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/products/${id}`, headers: key.headers })).statusCode,
        204,
      );
      await delivered;
      assert.deepEqual(
        rx.received.map((r) => JSON.parse(r.body).type),
        ['product.deleted'],
      );
    } finally {
      await worker.halt();
      await retire(t, key.accountId);
    }
  });
});
