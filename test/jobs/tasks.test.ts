import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createAccount } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { startBackgroundWork } from '../../src/jobs/tasks.js';
import { type CoreRuntime, createCoreRuntime } from '../../src/runtime.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { insertListings, listingState } from './support.js';

/**
 * The registry (src/jobs/tasks.ts) starts exactly the tasks of a process's roles, on the
 * services a worker-only process opens (createCoreRuntime), as `pricehound worker` does.
 */

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const T = { timeout: 30_000 };

describe('background work by role', () => {
  let storage: TestStorage;
  let rt: CoreRuntime;
  before(async () => {
    storage = await testStorage();
    rt = await createCoreRuntime(
      loadConfig({ ...storage.env, PRICE_ROLLUP_AFTER_DAYS: '30', WORKER_CONCURRENCY: '3' }),
      log,
    );
  });
  after(async () => {
    await rt?.close();
    await storage?.cleanup();
  });

  // The embedded engine's maintenance (it has no autovacuum) runs in any process that owns it.
  const embedded = process.env.DATABASE_URL ? [] : ['embedded-maintenance'];
  // Packing closed months rewrites a partition while requests go on: PostgreSQL only.
  const pack = process.env.DATABASE_URL ? ['price-pack'] : [];
  const cases = [
    {
      roles: { api: false, worker: true },
      command: 'worker',
      tasks: ['checks', 'webhook-deliveries', 'alert-backlog', 'partitions', ...embedded],
    },
    {
      roles: { api: true, worker: false },
      command: 'serve',
      tasks: [
        'price-rollup',
        'partitions',
        'indexes',
        ...pack,
        'price-blocks',
        'price-spans',
        'price-day-texts',
        'idempotency-key-sweep',
        'event-prune',
        ...embedded,
      ],
    },
    {
      roles: { api: true, worker: true },
      command: 'start',
      tasks: [
        'checks',
        'webhook-deliveries',
        'alert-backlog',
        'price-rollup',
        'partitions',
        'indexes',
        ...pack,
        'price-blocks',
        'price-spans',
        'price-day-texts',
        'idempotency-key-sweep',
        'event-prune',
        ...embedded,
      ],
    },
  ];
  for (const { roles, command, tasks } of cases) {
    it(`${command}: ${tasks.join(', ')}`, T, async () => {
      const work = await startBackgroundWork(rt, roles, log);
      try {
        assert.deepEqual(work.tasks, tasks);
        const worker = work.ready.worker as { id: string; concurrency: number } | undefined;
        assert.equal(worker?.concurrency, roles.worker ? 3 : undefined, 'the check worker is named in the ready line');
      } finally {
        await work.stop(0);
      }
    });
  }

  it('PRICE_PACK_AFTER_DAYS=0: no month is packed', T, async () => {
    const work = await startBackgroundWork(
      { ...rt, config: loadConfig({ ...storage.env, PRICE_PACK_AFTER_DAYS: '0' }) },
      { api: true, worker: false },
      log,
    );
    await work.stop(0);
    assert.ok(!work.tasks.includes('price-pack'), work.tasks.join(', '));
    assert.ok(work.tasks.includes('price-blocks'));
  });

  it('without PRICE_ROLLUP_AFTER_DAYS the API runs no roll-up', T, async () => {
    const work = await startBackgroundWork(
      { ...rt, config: loadConfig(storage.env) },
      { api: true, worker: false },
      log,
    );
    await work.stop(0);
    assert.deepEqual(work.tasks, [
      'partitions',
      'indexes',
      ...pack,
      'price-blocks',
      'price-spans',
      'price-day-texts',
      'idempotency-key-sweep',
      'event-prune',
      ...(process.env.DATABASE_URL ? [] : ['embedded-maintenance']),
    ]);
  });

  it('scheduled checks clear leases left behind on the embedded database only', T, async () => {
    const accountId = await createAccount(rt.db);
    await rt.db.query(
      `insert into products (id, account_id, name, base_price, currency) values ('prod_tasks', $1, 'Kettle', 40, 'EUR')`,
      [accountId],
    );
    // Disabled, so that no worker claims it: only the start-up release can touch its lease.
    const [id] = await insertListings(rt.db, accountId, 'prod_tasks', [
      { url: 'http://127.0.0.1:9/left-behind', enabled: false },
    ]);
    await rt.db.query(
      `update listings set locked_by = 'a-run-that-died', locked_until = now() + interval '1 hour' where id = $1`,
      [id],
    );
    const work = await startBackgroundWork(rt, { api: false, worker: true }, log);
    await work.stop(0);
    // With PostgreSQL other workers may hold leases now: they are left to expire.
    const expected = rt.db.kind === 'pglite' ? null : 'a-run-that-died';
    assert.equal((await listingState(rt.db, id!)).locked_by, expected);
  });
});
