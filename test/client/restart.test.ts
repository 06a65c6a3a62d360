import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createClient, type RetryInfo } from '../../clients/typescript/src/index.js';
import { testStorage } from '../helpers/database.js';
import { type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { freePort, lossyProxy, makeKeys } from './support.js';

// The client against a real server process that restarts in the middle of a run, behind a proxy
// that also loses some answers after the service has done the work: every call ends in success,
// and Idempotency-Key keeps the retried POSTs from creating anything twice.

describe('the client across a server restart', () => {
  it(
    'creates every product exactly once while the server restarts and answers get lost',
    { timeout: 300_000 },
    async () => {
      const storage = await testStorage();
      const port = await freePort();
      const env = { ...storage.env, PORT: String(port), SHUTDOWN_TIMEOUT_MS: '5000' };
      let server: ServerProcess | undefined;
      const proxy = await lossyProxy(port, 4);
      let restarted: Promise<void> | undefined;
      try {
        const [key] = await makeKeys(storage, ['business']);
        server = await spawnServer(env);
        const retries: RetryInfo[] = [];
        const client = createClient({
          baseUrl: proxy.url,
          apiKey: key!,
          timeoutMs: 20_000,
          // Rides out a restart of up to two minutes or so (a busy machine starts a server slowly).
          retry: { maxAttempts: 250, baseDelayMs: 100, maxWaitMs: 1000 },
          onRetry: (r) => retries.push(r),
        });

        const total = 48;
        let started = 0;
        let done = 0;
        const names: string[] = [];
        // Products without a SKU: nothing but the Idempotency-Key tells a retry from a new product.
        const worker = async () => {
          while (started < total) {
            const i = started++;
            const created = await client.POST('/api/v1/products', {
              body: { name: `restart ${i}`, base_price: 10 + i, currency: 'EUR' },
            });
            names.push(created.name);
            if (++done === total / 3) {
              restarted = (async () => {
                await server!.stop();
                server = await spawnServer(env);
              })();
            }
          }
        };
        await Promise.all(Array.from({ length: 4 }, worker));
        await restarted;

        assert.equal(names.length, total);
        const listed = [];
        for await (const p of client.paginate('/api/v1/products', { params: { query: { limit: 100 } } }))
          listed.push(p.name);
        assert.deepEqual(
          listed.sort(),
          Array.from({ length: total }, (_, i) => `restart ${i}`).sort(),
          'each product once, none twice',
        );
        assert.ok(proxy.dropped.size >= total / 4 - 1, `answers lost: ${proxy.dropped.size}`);
        // Every lost answer came back on a retry as the service's stored first answer.
        assert.deepEqual(
          [...proxy.dropped].filter((k) => !proxy.replayed.has(k)),
          [],
        );
        assert.ok(proxy.refused > 0, 'calls found the server down and were retried until it was back');
        assert.ok(retries.some((r) => r.error.name === 'NetworkError'));
        assert.ok(retries.every((r) => r.method === 'POST' || r.method === 'GET'));
      } finally {
        await restarted?.catch(() => undefined); // the new server, even when the run failed, is stopped below
        await server?.stop();
        await proxy.close();
        await storage.cleanup();
      }
    },
  );
});
