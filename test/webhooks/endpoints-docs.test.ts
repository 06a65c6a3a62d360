import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { useTestApp } from '../helpers/app.js';
import { call, createWebhook } from './api-support.js';
import type { WebhookMaybeSecret } from '../helpers/api-types.js';

/**
 * docs/WEBHOOKS.md's plain node:crypto verifier, run as printed: it must accept what the
 * Standard Webhooks reference implementation signs with secrets our API makes, both during a
 * rotation, and refuse a changed body, another secret and an old timestamp.
 */

const t = useTestApp({ ALLOW_LOOPBACK_TARGETS: 'true' });

type Verify = (
  body: string | Buffer,
  headers: Record<string, string>,
  secrets: string[],
  toleranceSeconds?: number,
) => boolean;

async function docsVerifier(): Promise<Verify> {
  const doc = fs.readFileSync(new URL('../../docs/WEBHOOKS.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<!-- verify-example:');
  assert.ok(start > 0, 'the marked example is in docs/WEBHOOKS.md');
  const code = /```js\n([\s\S]*?)```/.exec(doc.slice(start))![1]!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ph-docs-'));
  const file = path.join(dir, 'verify.mjs');
  fs.writeFileSync(file, code);
  try {
    const mod = (await import(pathToFileURL(file).href)) as { verifyPricehound: Verify };
    return mod.verifyPricehound;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function signed(secret: string, id: string, body: string, at = Math.floor(Date.now() / 1000)): Record<string, string> {
  const signature = new Webhook(secret).sign(id, new Date(at * 1000), body);
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signature };
}

describe('docs/WEBHOOKS.md: the node:crypto verification example', () => {
  it('verifies what standardwebhooks signs with our secrets, and nothing else', async () => {
    const verify = await docsVerifier();
    const { headers } = await t.newKey();
    const w = await createWebhook(t, headers);
    const rotated = (await call(t, headers, 'POST', `/webhooks/${w.id}/rotate-secret`, {})).json<WebhookMaybeSecret>();
    const body = JSON.stringify({
      id: 'evt_01',
      type: 'webhook.test',
      created_at: new Date().toISOString(),
      data: { message: 'héllo' },
    });

    const one = signed(w.secret!, 'evt_01', body);
    assert.equal(verify(body, one, [w.secret!]), true);
    assert.equal(verify(Buffer.from(body), one, [rotated.secret!, w.secret!]), true, 'either secret, raw bytes');
    // Both signatures in one header, as during a rotation's overlap.
    // Signed at the same second as `one` (a clock tick between the two made this flaky).
    const both = {
      ...one,
      'webhook-signature': `${signed(rotated.secret!, 'evt_01', body, Number(one['webhook-timestamp']))['webhook-signature']} ${one['webhook-signature']}`,
    };
    assert.equal(verify(body, both, [rotated.secret!]), true);
    assert.equal(verify(body, both, [w.secret!]), true);
    // And the reference implementation agrees on the doubled header.
    assert.deepEqual(new Webhook(rotated.secret!).verify(body, both), JSON.parse(body));

    assert.equal(verify(`${body} `, one, [w.secret!]), false, 'a changed body');
    assert.equal(verify(body, one, [rotated.secret!]), false, 'another secret');
    assert.equal(verify(body, { ...one, 'webhook-id': 'evt_02' }, [w.secret!]), false, 'another id');
    const old = signed(w.secret!, 'evt_01', body, Math.floor(Date.now() / 1000) - 3600);
    assert.equal(verify(body, old, [w.secret!]), false, 'an old timestamp');
    assert.equal(verify(body, { ...one, 'webhook-signature': 'v1,' }, [w.secret!]), false);
    assert.equal(verify(body, {}, [w.secret!]), false);
  });
});
