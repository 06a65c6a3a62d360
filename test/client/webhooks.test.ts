import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src/index.js';

// The client's verifyWebhook against signatures made by the reference implementation of
// Standard Webhooks (the standardwebhooks package), not by our own signing code.

const secret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;
const body = JSON.stringify({
  id: 'evt_1',
  type: 'price.changed',
  created_at: '2026-01-01T00:00:00.000Z',
  data: { price: '9.99', name: 'Ünïcode ✓' },
});

function signed(key: string, at = new Date(), id = 'evt_1', payload = body) {
  const signature = new Webhook(key).sign(id, at, payload);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

describe('verifyWebhook', () => {
  it('accepts what standardwebhooks signs, as text, bytes, Headers or a plain object, and returns the payload', async () => {
    const key = secret();
    const headers = signed(key);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
    const payload = await verifyWebhook<{ type: string }>(key, body, headers);
    assert.equal(payload.type, 'price.changed');
    assert.deepEqual(await verifyWebhook(key, new TextEncoder().encode(body), new Headers(headers)), JSON.parse(body));
    // Node's IncomingHttpHeaders: lower-case names, values possibly arrays.
    assert.ok(await verifyWebhook(key, Buffer.from(body), { ...headers, 'webhook-id': ['evt_1'] }));
  });

  it('accepts any one of several space-separated signatures (a rotation’s overlap)', async () => {
    const [old, current] = [secret(), secret()];
    const at = new Date();
    const both = {
      ...signed(current, at),
      'webhook-signature': `${signed(old, at)['webhook-signature']} ${signed(current, at)['webhook-signature']}`,
    };
    assert.ok(await verifyWebhook(old, body, both));
    assert.ok(await verifyWebhook(current, body, both));
    await assert.rejects(verifyWebhook(secret(), body, both), WebhookVerificationError);
  });

  it('refuses a changed body, id or timestamp, another secret, and missing or malformed headers', async () => {
    const key = secret();
    const headers = signed(key);
    const refused = async (k: string, b: string, h: Record<string, string>, why: RegExp) =>
      assert.rejects(
        verifyWebhook(k, b, h),
        (e: unknown) => e instanceof WebhookVerificationError && why.test(e.message),
      );
    await refused(key, body.replace('9.99', '0.01'), headers, /no signature matches/);
    await refused(key, body, { ...headers, 'webhook-id': 'evt_2' }, /no signature matches/);
    await refused(
      key,
      body,
      { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) },
      /no signature matches/,
    );
    await refused(secret(), body, headers, /no signature matches/);
    await refused(
      key,
      body,
      { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') },
      /no signature matches/,
    );
    await refused(key, body, { ...headers, 'webhook-signature': 'v1,not base64!' }, /no signature matches/);
    const { 'webhook-signature': _, ...unsigned } = headers;
    await refused(key, body, unsigned, /missing webhook-signature/);
    await refused(key, body, { ...headers, 'webhook-timestamp': 'yesterday' }, /Unix seconds/);
  });

  it('refuses a timestamp more than 5 minutes away, either way, unless told otherwise', async () => {
    const key = secret();
    const now = Date.now();
    // 302 s, not 301: timestamps are whole seconds, so one made just before a second ticks over
    // can read a second nearer when it is checked just after.
    for (const offset of [-302_000, 302_000]) {
      const headers = signed(key, new Date(now + offset));
      await assert.rejects(verifyWebhook(key, body, headers), /too old or in the future/);
      assert.ok(await verifyWebhook(key, body, headers, { toleranceSeconds: 600 }));
    }
    assert.ok(await verifyWebhook(key, body, signed(key, new Date(now - 290_000))));
    // The reference implementation agrees on what it signed.
    const headers = signed(key);
    assert.deepEqual(new Webhook(key).verify(body, headers), await verifyWebhook(key, body, headers));
  });
});
