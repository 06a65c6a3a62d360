import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { spawnServer } from '../helpers/server-process.js';
import { createKeyWithCli } from '../cli/helpers/cli.js';

describe('kill -9 right after a 201', () => {
  let storage: TestStorage;
  before(async () => {
    storage = await testStorage();
  });
  after(async () => {
    await storage.cleanup();
  });

  it('loses nothing: the product is there after a restart on the same data', async () => {
    const first = await spawnServer(storage.env);
    let id: string;
    let created: Record<string, unknown>;
    let headers: Record<string, string>;
    try {
      const k = await createKeyWithCli(storage.env);
      headers = { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' };
      const res = await fetch(`${first.url}/api/v1/products`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Espresso machine', sku: 'EM-1', base_price: 1234567.8912, currency: 'EUR' }),
      });
      assert.equal(res.status, 201);
      created = (await res.json()) as Record<string, unknown>;
      id = String(created.id);
    } finally {
      // Immediately: no chance to flush or close anything.
      assert.equal((await first.stop('SIGKILL')).signal, 'SIGKILL');
    }

    if (storage.kind === 'pglite') {
      // The dead process left its lock (and socket) behind; the next start must clear them.
      const lock = JSON.parse(fs.readFileSync(path.join(storage.env.DATA_DIR!, 'pricehound.lock'), 'utf8')) as {
        pid: number;
      };
      assert.equal(lock.pid, first.proc.pid);
    }

    const second = await spawnServer(storage.env);
    try {
      const res = await fetch(`${second.url}/api/v1/products/${id}`, { headers });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), created);
    } finally {
      assert.equal((await second.stop()).code, 0);
    }
  });
});
