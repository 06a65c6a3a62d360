import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKeyWithCli } from '../cli/helpers/cli.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';

/**
 * Keys and webhook secrets never reach the logs (issue 12, security review): a server at
 * LOG_LEVEL=debug is taken through every path that handles them (good and bad keys, a key in
 * the query string, a malformed body, webhook creation, rotation, a failed and a successful
 * delivery) and its whole log is searched for each secret and its distinctive half.
 */
describe('secrets never reach the logs', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  let rx: Receiver;
  before(async () => {
    storage = await testStorage();
    rx = await startReceiver();
    server = await spawnServer({
      ...storage.env,
      LOG_LEVEL: 'debug',
      ALLOW_LOOPBACK_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s',
    });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await rx?.close();
    await storage?.cleanup();
  });

  it('no API key, webhook secret or signature appears in any log line', async () => {
    const { key } = await createKeyWithCli(storage.env);
    const secrets = new Set<string>([key]);
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    };
    assert.equal((await call('GET', '/products')).status, 200);
    assert.equal((await call('GET', '/products', undefined, { authorization: `Bearer ${key}x` })).status, 401);
    assert.equal(
      (
        await call('GET', '/products', undefined, {
          authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
        })
      ).status,
      401,
    );
    // A key put in the query string by mistake: refused like any unknown parameter, and not logged either.
    assert.equal((await call('GET', `/products?api_key=${key}`)).status, 422);
    assert.equal((await call('GET', `/products?q=${key}`)).status, 200);
    const pasted = await server.waitForLog(
      (l) => l.msg === 'request' && typeof l.url === 'string' && l.url.startsWith('/api/v1/products?q='),
    );
    assert.equal(pasted.url, '/api/v1/products?q=[redacted]', 'a key anywhere in the URL is redacted');
    assert.equal((await call('POST', '/products', `{"name": "${key}", `)).status, 400);

    rx.answer = (_r, n) => (n === 1 ? { status: 500, body: 'down' } : { status: 204 });
    const ep = await call('POST', '/webhooks', { url: rx.url, event_types: ['product.created'] });
    assert.equal(ep.status, 201, JSON.stringify(ep.json));
    secrets.add(ep.json.secret as string);
    const rotated = await call('POST', `/webhooks/${ep.json.id as string}/rotate-secret`, {});
    assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
    secrets.add(rotated.json.secret as string);
    assert.equal((await call('POST', '/products', { name: 'Kettle', base_price: 10, currency: 'EUR' })).status, 201);
    // The first attempt fails (500), the retry a second later succeeds: both are logged, signed with both secrets.
    await rx.until((r) => r.length >= 2, 30_000);
    for (const r of rx.received)
      for (const sig of String(r.headers['webhook-signature']).split(' ')) secrets.add(sig.slice(sig.indexOf(',') + 1));
    await server.waitForLog(
      (l) => l.msg === 'request' && l.url === `/api/v1/webhooks/${ep.json.id as string}/rotate-secret`,
    );

    const logs = JSON.stringify(server.logs);
    assert.ok(server.logs.length > 10, `the server logged (${server.logs.length} lines)`);
    for (const s of secrets) {
      assert.ok(s.length >= 20, 'a real secret');
      assert.ok(!logs.includes(s), `a secret starting ${s.slice(0, 8)} is in the logs`);
      // Its random part alone (after the ph_live_ / whsec_ prefix) is not there either.
      const random = s.slice(s.indexOf('_', 3) + 1);
      assert.ok(!logs.includes(random.slice(0, 24)), `part of a secret starting ${s.slice(0, 8)} is in the logs`);
    }
  });
});
