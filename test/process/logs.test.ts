import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';

describe('structured request logs', () => {
  let storage: TestStorage;
  let server: ServerProcess;
  before(async () => {
    storage = await testStorage();
    server = await spawnServer(storage.env);
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await storage?.cleanup();
  });

  it("logs each request as one JSON line whose request_id is the response's X-Request-Id", async () => {
    const res = await fetch(`${server.url}/api/v1/products?probe=generated`);
    assert.equal(res.status, 401);
    const id = res.headers.get('x-request-id');
    assert.match(id ?? '', /^req_[A-Za-z0-9_-]+$/);
    const line = await server.waitForLog((l) => l.msg === 'request' && l.url === '/api/v1/products?probe=generated');
    assert.equal(line.request_id, id);
    assert.equal(line.status, 401);
    assert.equal(line.method, 'GET');
    assert.equal(typeof line.ms, 'number');
    assert.equal(typeof line.time, 'number');
    assert.equal(line.level, 30);
  });

  it("keeps a caller's X-Request-Id, echoes it and logs it", async () => {
    const res = await fetch(`${server.url}/api/v1/products?probe=given`, {
      headers: { 'x-request-id': 'trace-42.abc' },
    });
    assert.equal(res.headers.get('x-request-id'), 'trace-42.abc');
    const body = (await res.json()) as { request_id: string };
    assert.equal(body.request_id, 'trace-42.abc');
    const line = await server.waitForLog((l) => l.msg === 'request' && l.url === '/api/v1/products?probe=given');
    assert.equal(line.request_id, 'trace-42.abc');
  });

  it('never logs the API key', async () => {
    const secret = `ph_live_${'x'.repeat(43)}`;
    await fetch(`${server.url}/api/v1/products?probe=secret`, { headers: { authorization: `Bearer ${secret}` } });
    await server.waitForLog((l) => l.msg === 'request' && l.url === '/api/v1/products?probe=secret');
    assert.ok(!JSON.stringify(server.logs).includes(secret));
  });
});
