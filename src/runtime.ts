import type { Logger } from 'pino';
import { KeyResolver } from './auth/key-cache.js';
import { createExtractor, type Extractor } from './checks/extractor.js';
import type { Config } from './config.js';
import { loadIdKey } from './db/id-key.js';
import { useIdKey } from './ids.js';
import { migrate } from './db/migrate.js';
import { openDatabase } from './db/open.js';
import { openPostgres } from './db/postgres.js';
import { primaryOnly, type ReadRouting, replicaRouting } from './db/read-replica.js';
import type { Database } from './db/types.js';
import { createBrowserFetcher, routeRenderJs } from './fetcher/browser/index.js';
import { createHttpFetcher } from './fetcher/http.js';
import type { Fetcher } from './fetcher/types.js';
import type { AppContext } from './context.js';
import { MemoryRateLimiter, type RateLimiter } from './ratelimit/limiter.js';
import { type Clock, OffsetClock, systemClock } from './time.js';
import { UsageRecorder } from './usage/recorder.js';

export interface Runtime extends AppContext {
  /** Flushes what is buffered and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** What a worker-only process needs: the database and the page fetcher. */
export interface CoreRuntime {
  config: Config;
  db: Database;
  /** The application clock (AppContext.clock). */
  clock: Clock;
  /** The deployment's key (src/db/id-key.ts). */
  deploymentKey: Buffer;
  fetcher: Fetcher;
  extractor: Extractor;
  close(): Promise<void>;
}

/**
 * The page fetcher of checks and the extract dry run: HTTP, and for render_js listings the
 * browser (system Chromium, started on the first such fetch; without one those fetches fail
 * with browser_unavailable). The browser shares the HTTP fetcher's address guard, robots.txt
 * check and per-host turns, so both follow one set of rules, one robots.txt cache and one
 * politeness budget per site.
 */
function createPageFetcher(config: Config, log: Logger): Fetcher {
  const http = createHttpFetcher(config);
  const browser = createBrowserFetcher(config, {
    guard: http.guard,
    robots: (url, signal, proxyUrl) => http.checkRobots(url, signal, proxyUrl),
    limiter: http.limiter,
    warn: (message) => log.warn({ component: 'browser' }, message),
  });
  return routeRenderJs(http, browser);
}

/**
 * Opens the database (migrating it) and the page fetcher: what both the API and the worker
 * need. `worker` processes use only this.
 */
export async function createCoreRuntime(
  config: Config,
  log: Logger,
  opts: { db?: Database; clock?: Clock } = {},
): Promise<CoreRuntime> {
  // TEST_CLOCK_OFFSET_MS is refused by the configuration unless NODE_ENV=test.
  const clock =
    opts.clock ?? (config.testClockOffsetMs !== 0 ? new OffsetClock(config.testClockOffsetMs) : systemClock);
  const db =
    opts.db ??
    (await openDatabase(config, { onIdleError: (err) => log.warn({ err }, 'idle database connection failed') }));
  let deploymentKey: Buffer;
  try {
    const applied = await migrate(db);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    deploymentKey = await loadIdKey(db);
    useIdKey(deploymentKey);
  } catch (err) {
    if (!opts.db) await db.close();
    throw err;
  }
  const fetcher = createPageFetcher(config, log);
  const extractor = createExtractor(config.extractThreads);
  let closed: Promise<void> | undefined;
  return {
    config,
    db,
    clock,
    deploymentKey,
    fetcher,
    extractor,
    close() {
      closed ??= (async () => {
        await fetcher.close().catch((err: unknown) => log.warn({ err }, 'error while closing the fetcher'));
        await extractor.close().catch((err: unknown) => log.warn({ err }, 'error while closing the extraction thread'));
        if (!opts.db) await db.close();
      })();
      return closed;
    },
  };
}

/**
 * Opens the database (migrating it), the page fetcher, the rate limiter and the caches:
 * everything the HTTP app needs, built once per process. `db` may be passed in (tests share one
 * per file).
 */
export async function createRuntime(
  config: Config,
  log: Logger,
  opts: { db?: Database; clock?: Clock } = {},
): Promise<Runtime> {
  const core = await createCoreRuntime(config, log, opts);
  const { db, clock, deploymentKey, fetcher, extractor } = core;
  const closers: (() => Promise<void>)[] = [];
  try {
    let limiter: RateLimiter;
    if (config.redisUrl) {
      // Loaded only when used: merely loading ioredis 6 makes string-heavy code such as page
      // extraction ~1.7x slower in the whole process (its RESP decoder declares
      // `class VerbatimString extends String`, which costs V8 a fast path), and a worker or an
      // API without Redis has no use for it.
      const { RedisRateLimiter } = await import('./ratelimit/redis.js');
      const redis = new RedisRateLimiter(config.redisUrl, log, `${config.redisPrefix}rl:`, clock.now.bind(clock));
      await redis.connect();
      limiter = redis;
    } else {
      limiter = new MemoryRateLimiter(clock.now.bind(clock));
    }
    closers.push(() => limiter.close());

    const keys = new KeyResolver(db, config.keyCacheTtlMs);
    await keys.start();
    closers.push(() => keys.stop());

    const usage = new UsageRecorder(db, (err) => log.warn({ err }, 'usage flush failed; will retry'));
    usage.start();
    closers.unshift(() => usage.stop());

    let reads: ReadRouting = primaryOnly(db);
    if (config.databaseReadUrl) {
      const replica = await openPostgres(config.databaseReadUrl, {
        poolSize: config.databasePoolSize,
        applicationName: 'pricehound-read',
        lazy: true,
        onIdleError: (err) => log.warn({ err }, 'idle read replica connection failed'),
      });
      let warned = false;
      reads = replicaRouting(db, replica, {
        maxLagMs: config.databaseReadMaxLagMs,
        checkMs: config.databaseReadCheckMs,
        onError: (err) => {
          // Once per outage: the reads have gone to the primary, which is what matters.
          if (!warned) log.warn({ err }, 'read replica unavailable; its reads go to the primary');
          warned = true;
        },
        onRecovered: () => {
          if (warned) log.info('read replica caught up; reads go to it again');
          warned = false;
        },
      });
      closers.push(() => reads.close());
    }

    let closed: Promise<void> | undefined;
    return {
      config,
      db,
      clock,
      deploymentKey,
      limiter,
      keys,
      usage,
      reads,
      fetcher,
      extractor,
      close() {
        closed ??= (async () => {
          for (const c of closers) await c().catch((err: unknown) => log.warn({ err }, 'error while closing'));
          await core.close();
        })();
        return closed;
      },
    };
  } catch (err) {
    for (const c of closers) await c().catch(() => undefined);
    await core.close();
    throw err;
  }
}
