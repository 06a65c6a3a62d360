import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import readline from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { testStorage, type TestStorage, usingPostgres } from '../helpers/database.js';
import { runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { TcpProxy } from '../ratelimit/tcp-proxy.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';
import { apiCaller, businessKey, checkAcknowledged, FAST_RETRIES, OUTAGE_MS, writeThroughOutage } from './support.js';

/**
 * Fault suite (issue 12, docs/RELIABILITY.md "Faults"): PostgreSQL goes away under load and comes
 * back. An API process and a worker process reach PostgreSQL through a loopback TCP proxy that
 * the test takes down (every connection cut, new ones refused) for FAULT_OUTAGE_S seconds (10;
 * 30 for the long form) while four writers keep creating products whose `product.created`
 * events go to a webhook receiver. The shared PostgreSQL itself is never stopped.
 * Holds: during the outage every answer is a 503 in our error shape, quickly; the processes
 * stay up and recover by themselves; every product acknowledged with a 201 exists afterwards;
 * every one of their events is delivered, and succeeds once in the delivery log.
 */

const WRITERS = 4;

describe(
  'PostgreSQL going away under load',
  { skip: !usingPostgres() && 'PostgreSQL only: the embedded database has no server to lose' },
  () => {
    let storage: TestStorage;
    let proxy: TcpProxy;
    let api: ServerProcess | undefined;
    let worker: ChildProcess | undefined;
    let rx: Receiver;
    let key: string;

    before(async () => {
      storage = await testStorage();
      const direct = new URL(storage.env.DATABASE_URL!);
      proxy = new TcpProxy(direct.hostname, Number(direct.port || 5432));
      await proxy.start();
      const viaProxy = new URL(direct);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      key = await businessKey(storage.env);
      rx = await startReceiver();
      const env = { ...storage.env, DATABASE_URL: viaProxy.toString(), ...FAST_RETRIES };
      api = await spawnServer(env, ['serve']);
      worker = runCli(['worker'], env);
      const exited = once(worker, 'exit');
      await new Promise<void>((resolve, reject) => {
        readline.createInterface({ input: worker!.stdout! }).on('line', (line) => {
          if (line.includes('"pricehound worker ready"')) resolve();
        });
        void exited.then(() => reject(new Error('the worker exited before it was ready')));
      });
    });

    after(async () => {
      worker?.kill('SIGKILL');
      await api?.stop('SIGKILL');
      await proxy?.stop();
      await rx?.close();
      await storage?.cleanup();
    });

    /** Set by the test below: undefined when every acknowledged product's event arrived after the outage, else why not. */
    let deliveriesAfterOutage: Promise<string | undefined> | undefined;

    it(
      'answers fast 503s while it is gone, recovers by itself, and loses and duplicates nothing acknowledged',
      { timeout: 240_000 },
      async () => {
        const run = await writeThroughOutage(
          apiCaller(() => api!.url, key),
          rx,
          WRITERS,
          { stop: () => proxy.stop(), start: () => proxy.start() },
        );
        assert.equal(api!.proc.exitCode, null, 'the API process is still running');
        assert.equal(worker!.exitCode, null, 'the worker process is still running');

        // Nothing acknowledged is lost; every acknowledged product's event is delivered and succeeds
        // once (checked apart, the test below, so that this one still reports its figures when
        // deliveries fail: a success write failed by the outage once froze the worker for good,
        // src/webhooks/delivery/success-group.ts).
        const kept = await checkAcknowledged(storage.env.DATABASE_URL!, run.answers, rx);
        deliveriesAfterOutage = kept.delivered;
        const failed = await kept.delivered;
        console.log(
          `# outage ${OUTAGE_MS} ms: ${run.during} answers during it, all 503, slowest ${run.slowest} ms; recovered ${run.recoveredIn} ms after; ${kept.acknowledged} acknowledged, all kept; deliveries after it: ${failed ?? `all arrived, the last ${kept.lastArrivedAt() - run.upAt} ms after PostgreSQL was back`}`,
        );
      },
    );

    it('delivers, after the outage, the event of every product acknowledged around it', async () => {
      assert.ok(deliveriesAfterOutage, 'the outage test ran');
      assert.equal(await deliveriesAfterOutage, undefined);
    });
  },
);
