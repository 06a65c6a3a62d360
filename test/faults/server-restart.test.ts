import assert from 'node:assert/strict';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { createKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { Database } from '../../src/db/types.js';
import { usingPostgres } from '../helpers/database.js';
import { pool } from '../helpers/pool.js';
import {
  privateServersMissing,
  PrivateServersUnavailable,
  type PrivateServers,
  startPrivateServers,
} from '../helpers/private-servers.js';
import {
  type LoggedProcess,
  type LogLine,
  type ServerProcess,
  spawnServer,
  spawnWorker,
} from '../helpers/server-process.js';
import { assertSpec429, inOneHour, rateHeaders } from '../ratelimit/support.js';
import { type Receiver, startReceiver } from '../webhooks/receiver.js';
import {
  apiCaller,
  checkAcknowledged,
  FAST_RETRIES,
  OUTAGE_MS,
  startWriters,
  until,
  writeThroughOutage,
} from './support.js';

/**
 * Fault suite (issue 12, docs/RELIABILITY.md "Faults"): the servers themselves stopped and
 * started again under load. The test starts a PostgreSQL 15 and a Redis of its own on free
 * loopback ports (test/helpers/private-servers.ts), so the shared ones are never touched; it
 * ignores DATABASE_URL's server and REDIS_URL, and runs in the PostgreSQL pass only.
 * Two API processes (`serve`) and a worker run on them while four writers create products whose
 * `product.created` events go to a webhook receiver.
 * - PostgreSQL stopped (`pg_ctl stop -m immediate`: every connection cut, crash recovery at the
 *   next start) for FAULT_OUTAGE_S seconds (10; 30 for the long form), then started again on the
 *   same port: fast 503s in our error shape meanwhile, recovery by itself, every product
 *   acknowledged with a 201 kept, each of their events delivered and succeeded once.
 * - Redis killed (SIGKILL: it comes back empty) under the same writers: every request still
 *   succeeds, each API process counts a key's requests on its own; started again, the processes
 *   share one count again: a free key gets exactly its plan's 1000 successes across both.
 */

const WRITERS = 4;
const REDIS_OUTAGE_MS = 5_000;
const FREE_LIMIT = 1000;

const skip = !usingPostgres()
  ? 'PostgreSQL only: runs in the PostgreSQL pass (it starts its own PostgreSQL and Redis)'
  : privateServersMissing();

describe('PostgreSQL and Redis restarted under load', { skip: skip ?? false }, () => {
  let servers: PrivateServers | undefined;
  /** Why the private servers could not be started: each test skips with it. */
  let unavailable: string | undefined;
  let db: Database | undefined;
  let apis: ServerProcess[] = [];
  let worker: LoggedProcess | undefined;
  let rx: Receiver;
  let key: string;
  let next = 0;
  /** The API processes in turn. */
  const base = () => apis[next++ % apis.length]!.url;
  const env: Record<string, string> = {};

  before(async () => {
    try {
      servers = await startPrivateServers();
    } catch (err) {
      if (!(err instanceof PrivateServersUnavailable)) throw err;
      unavailable = err.message;
      return;
    }
    Object.assign(env, {
      DATABASE_URL: servers.postgres.url,
      REDIS_URL: servers.redis.url,
      REDIS_PREFIX: 'ph:',
      ...FAST_RETRIES,
    });
    db = await openDatabase(loadConfig(env));
    await migrate(db);
    key = (await createKey(db, { plan: 'business' })).key;
    rx = await startReceiver();
    const started = await Promise.allSettled([
      spawnServer(env, ['serve']),
      spawnServer(env, ['serve']),
      spawnWorker(env),
    ]);
    for (const s of started.slice(0, 2)) if (s.status === 'fulfilled') apis.push(s.value as ServerProcess);
    if (started[2]!.status === 'fulfilled') worker = started[2].value;
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });

  after(async () => {
    await Promise.all([...apis.map((a) => a.stop('SIGKILL')), worker?.stop('SIGKILL')]);
    apis = [];
    await db?.close().catch(() => undefined);
    await rx?.close();
    await servers?.cleanup();
  });

  const ready = (t: TestContext) => {
    if (unavailable) t.skip(unavailable);
    return !unavailable;
  };
  const alive = () => {
    for (const [i, a] of apis.entries())
      assert.equal(a.proc.exitCode ?? a.proc.signalCode, null, `API process ${i + 1} is still running`);
    assert.equal(worker!.proc.exitCode ?? worker!.proc.signalCode, null, 'the worker process is still running');
  };

  /** Set by the test below: undefined when every acknowledged product's event arrived and succeeded once, else why not. */
  let deliveriesAfterRestart: Promise<string | undefined> | undefined;

  it(
    'PostgreSQL stopped and started again: fast 503s meanwhile, recovery by itself, nothing acknowledged lost',
    { timeout: 180_000 },
    async (t) => {
      if (!ready(t)) return;
      const run = await writeThroughOutage(apiCaller(base, key), rx, WRITERS, {
        stop: () => servers!.postgres.stop('immediate'),
        start: () => servers!.postgres.start(), // crash recovery, then it accepts connections
      });
      alive();

      const kept = await checkAcknowledged(servers!.postgres.url, run.answers, rx);
      deliveriesAfterRestart = kept.delivered;
      const failed = await kept.delivered;
      console.log(
        `# PostgreSQL stopped ${OUTAGE_MS} ms: ${run.during} answers during it, all 503, slowest ${run.slowest} ms; accepting ${run.startMs} ms after pg_ctl start; first 201 ${run.recoveredIn} ms after; ${kept.acknowledged} acknowledged, all kept; deliveries: ${failed ?? `all arrived and succeeded once, the last ${kept.lastArrivedAt() - run.upAt} ms after the start`}`,
      );
    },
  );

  it('delivers, after the restart, the event of every product acknowledged around it, each succeeded once', async (t) => {
    if (!ready(t)) return;
    assert.ok(deliveriesAfterRestart, 'the restart test ran');
    assert.equal(await deliveriesAfterRestart, undefined);
  });

  it(
    'Redis killed and started again: requests go on, counted per process meanwhile; then one shared limit again',
    { timeout: 180_000 },
    async (t) => {
      if (!ready(t)) return;
      const isMsg = (prefix: string) => (l: LogLine) => typeof l.msg === 'string' && l.msg.startsWith(prefix);
      const count = (p: LoggedProcess, prefix: string) => p.logs.filter(isMsg(prefix)).length;
      const freeKey = async () => {
        const k = await createKey(db!, { plan: 'free' });
        return { id: k.id, headers: { authorization: `Bearer ${k.key}` } };
      };
      const get = async (url: string, headers: Record<string, string>) => {
        const sent = Date.now();
        const res = await fetch(`${url}/api/v1/products?limit=1`, { headers });
        return {
          status: res.status,
          headers: Object.fromEntries(res.headers),
          body: await res.text(),
          sent,
          received: Date.now(),
        };
      };

      const writers = startWriters(WRITERS, apiCaller(base, key), 'Redis');
      const { answers } = writers;
      try {
        await until(
          () => answers.filter((a) => a.status === 201).length >= 20,
          60_000,
          '20 products before Redis is killed',
        );
        const degradedBefore = apis.map((a) => count(a, 'redis unreachable'));
        const recoveredBefore = apis.map((a) => count(a, 'redis reachable again'));
        const downAt = Date.now();
        await servers!.redis.stop('SIGKILL');
        // Each API process notices on its next request, says so, and counts in memory.
        await Promise.all(apis.map((a, i) => a.waitForLogs(degradedBefore[i]! + 1, isMsg('redis unreachable'))));
        const noticedIn = Date.now() - downAt;

        // Per process while Redis is away: a new key's requests count down at each process alone.
        const remaining = await inOneHour(async () => {
          const apart = await freeKey();
          const seen: number[][] = [];
          for (const a of apis) {
            const got = [];
            for (let i = 0; i < 5; i++) {
              const r = await get(a.url, apart.headers);
              assert.equal(r.status, 200, r.body);
              got.push(rateHeaders(r.headers).remaining);
            }
            seen.push(got);
          }
          return seen;
        });
        assert.deepEqual(
          remaining,
          apis.map(() => [999, 998, 997, 996, 995]),
          'each process counts on its own',
        );

        await new Promise((r) => setTimeout(r, Math.max(0, downAt + REDIS_OUTAGE_MS - Date.now()))); // the outage: a fixed span of time
        const upAt = Date.now();
        await servers!.redis.start();
        await Promise.all(apis.map((a, i) => a.waitForLogs(recoveredBefore[i]! + 1, isMsg('redis reachable again'))));
        const sharedIn = Date.now() - upAt;
        await writers.stop();

        // Every write went through, with Redis away and back.
        const statuses = [...new Set(answers.map((a) => a.status))];
        assert.deepEqual(statuses, [201], `statuses while Redis was killed and started: ${statuses.join(', ')}`);
        const whileDown = answers.filter((a) => a.at > downAt && a.at + a.ms < upAt);
        assert.ok(whileDown.length >= 10, `writes while Redis was down: ${whileDown.length}`);
        const slowest = Math.max(...whileDown.map((a) => a.ms));
        alive();

        // Shared again: one count across both processes, exactly the plan's number of successes.
        const shared = await inOneHour(async () => {
          const k = await freeKey();
          const got = await pool(FREE_LIMIT + 100, 16, (i) => get(apis[i % apis.length]!.url, k.headers));
          return { k, got };
        });
        const ok = shared.got.filter((r) => r.status === 200);
        const refused = shared.got.filter((r) => r.status === 429);
        assert.equal(ok.length, FREE_LIMIT, `successes across ${apis.length} processes`);
        assert.equal(refused.length, 100);
        for (const r of refused.slice(0, 3))
          assertSpec429({ statusCode: r.status, headers: r.headers, body: r.body }, FREE_LIMIT, r.sent, r.received);
        assert.deepEqual(
          ok.map((r) => rateHeaders(r.headers).remaining).sort((p, q) => p - q),
          Array.from({ length: FREE_LIMIT }, (_, i) => i),
          'each Remaining value handed out once across the processes',
        );
        for (let i = 0; i < apis.length; i++)
          assert.ok(
            shared.got.some((r, j) => j % apis.length === i && r.status === 200),
            `process ${i + 1} served`,
          );
        // and the count is the restarted Redis's (it came back empty)
        const redis = new Redis(servers!.redis.url);
        try {
          const counters = await redis.keys(`ph:*:key:${shared.k.id}`);
          assert.equal(counters.length, 1, `one counter for the key: ${counters.join(', ')}`);
          assert.ok(Number(await redis.get(counters[0]!)) >= FREE_LIMIT, 'counted in Redis');
        } finally {
          redis.disconnect();
        }
        console.log(
          `# Redis killed for ${REDIS_OUTAGE_MS} ms: noticed by both API processes in ${noticedIn} ms; ${whileDown.length} writes while it was down, all 201, slowest ${slowest} ms; counted per process meanwhile; shared again ${sharedIn} ms after the start; then ${FREE_LIMIT + 100} requests of a free key across both: ${ok.length} x 200, ${refused.length} x 429`,
        );
      } finally {
        await writers.stop().catch(() => undefined);
      }
    },
  );
});
