import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKey, KEY_PREFIX } from '../../src/auth/keys.js';
import type { Plan } from '../../src/auth/plans.js';
import { loadConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import { pool } from '../helpers/pool.js';
import { testStorage, type TestStorage } from '../helpers/database.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { assertSpec429, inOneHour, nextHour, rateHeaders } from './support.js';

// Real server processes (src/cli/main.ts start), over keep-alive HTTP on loopback:
// - two processes on one PostgreSQL schema and one Redis enforce one limit together;
// - with Redis unreachable a process still starts and serves, counting per process.

/** Keys made directly in the storage the servers will use (before they start, for PGlite). */
async function makeKeys(storage: TestStorage, plans: Plan[]) {
  const config = loadConfig(storage.env);
  const db = await openDatabase(config);
  try {
    await migrate(db);
    const keys = [];
    for (const plan of plans) keys.push(await createKey(db, { plan }));
    return keys.map((k) => ({ ...k, headers: { authorization: `Bearer ${k.key}` } }));
  } finally {
    await db.close();
  }
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  sent: number;
  received: number;
}

async function get(base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const sent = Date.now();
  const res = await fetch(base + path, { headers });
  const body = await res.text();
  return { status: res.status, headers: Object.fromEntries(res.headers), body, sent, received: Date.now() };
}

const as429 = (a: Answer) => ({ statusCode: a.status, headers: a.headers, body: a.body });

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);

describe(
  'two API processes sharing PostgreSQL and Redis',
  {
    skip: shared
      ? false
      : 'needs DATABASE_URL and REDIS_URL: embedded PGlite is single-process by design, so there is no second process to share a limit with',
  },
  () => {
    it(
      'enforce one limit together: 1000 requests across both, then the next to either is the spec’s 429',
      { timeout: 120_000 },
      async () => {
        const storage = await testStorage();
        const servers: ServerProcess[] = [];
        try {
          const [free, other] = await makeKeys(storage, ['free', 'business']);
          const env = { ...storage.env, AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_SECONDS: '3600' };
          // started together: the second also checks that concurrent starters share one schema
          const started = await Promise.allSettled([spawnServer(env), spawnServer(env)]);
          for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
          for (const s of started) if (s.status === 'rejected') throw s.reason;
          const [a, b] = servers.map((s) => s.url) as [string, string];
          assert.notEqual(a, b);

          await inOneHour(async () => {
            // (a retry after an hour rollover would start from a fresh window with the same key)
            const answers = await pool(1000, 16, (i) =>
              get(
                i % 2 === 0 ? a : b,
                i % 4 < 2 ? '/api/v1/products?limit=1' : '/v1/products/not-an-id',
                free!.headers,
              ),
            );
            assert.deepEqual([...new Set(answers.map((x) => x.status))].sort(), [200, 404]);
            // One atomic counter: the 1000 answers got each Remaining from 999 down to 0 exactly once.
            const remaining = answers.map((x) => rateHeaders(x.headers).remaining).sort((p, q) => p - q);
            assert.deepEqual(
              remaining,
              Array.from({ length: 1000 }, (_, i) => i),
            );

            for (const base of [a, b, a]) {
              const over = await get(base, '/api/v1/products', free!.headers);
              assertSpec429(as429(over), 1000, over.sent, over.received);
              assert.equal(rateHeaders(over.headers).remaining, 0);
            }
          });

          // The failed-authentication budget of an address is shared too: failures at A block B,
          // where this process has not seen a single failure.
          // Each 401 reports the shared budget: failures at A and B count down one counter.
          for (let i = 0; i < 5; i++) {
            const res = await get(i % 2 === 0 ? a : b, '/api/v1/products', {
              authorization: `Bearer ${KEY_PREFIX}${'z'.repeat(42)}${i}`,
            });
            assert.equal(res.status, 401);
            assert.deepEqual(
              rateHeaders(res.headers),
              { limit: 5, remaining: 4 - i, reset: nextHour(res.sent) },
              `failure ${i + 1}`,
            );
          }
          const blocked = await get(b, '/api/v1/products', other!.headers);
          assertSpec429(as429(blocked), 5, blocked.sent, blocked.received);
          assert.deepEqual(
            rateHeaders(blocked.headers),
            { limit: 5, remaining: 0, reset: nextHour(blocked.sent) },
            'the failure budget, not the key',
          );
        } finally {
          await Promise.all(servers.map((s) => s.stop()));
          await storage.cleanup();
        }
      },
    );
  },
);

describe('an API process whose Redis is unreachable', () => {
  it(
    'starts, says so in its log, and limits per process instead of failing requests',
    { timeout: 120_000 },
    async () => {
      const storage = await testStorage();
      let server: ServerProcess | undefined;
      try {
        const [free] = await makeKeys(storage, ['free']);
        // port 1 on loopback: nothing listens there, connections are refused at once
        server = await spawnServer({ ...storage.env, REDIS_URL: 'redis://127.0.0.1:1', REDIS_PREFIX: 'unused:' });
        const warning = await server.waitForLog(
          (l) => typeof l.msg === 'string' && l.msg.startsWith('redis unreachable'),
        );
        assert.equal(warning.level, 40, 'logged as a warning');

        const ready = await get(server.url, '/readyz', {});
        assert.equal(ready.status, 200);

        await inOneHour(async () => {
          const answers = await pool(1000, 8, () => get(server!.url, '/v1/products/not-an-id', free!.headers));
          assert.deepEqual([...new Set(answers.map((x) => x.status))], [404]);
          const remaining = answers.map((x) => rateHeaders(x.headers).remaining).sort((p, q) => p - q);
          assert.deepEqual(
            remaining,
            Array.from({ length: 1000 }, (_, i) => i),
          );
          const over = await get(server!.url, '/api/v1/products', free!.headers);
          assertSpec429(as429(over), 1000, over.sent, over.received);
        });
        assert.equal(server.proc.exitCode, null, 'still running');

        // A clean stop writes the usage counts it had buffered (issue 2: data written before a
        // clean stop is there afterwards).
        const exit = await server.stop('SIGTERM');
        assert.equal(exit.code, 0);
        const db = await openDatabase(loadConfig(storage.env));
        try {
          const r = await db.query<{ requests: number; rejected: number }>(
            'select requests, rejected from api_usage where key_id = $1 order by hour desc limit 1',
            [free!.id],
          );
          assert.deepEqual(r.rows, [{ requests: 1000, rejected: 1 }]);
        } finally {
          await db.close();
        }
      } finally {
        await server?.stop();
        await storage.cleanup();
      }
    },
  );
});
