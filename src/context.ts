import type { Principal } from './auth/keys.js';
import type { KeyResolver } from './auth/key-cache.js';
import type { Config } from './config.js';
import type { Extractor } from './checks/extractor.js';
import type { ReadRouting } from './db/read-replica.js';
import type { Database } from './db/types.js';
import type { Fetcher } from './fetcher/types.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import type { Clock } from './time.js';
import type { UsageRecorder } from './usage/recorder.js';

/** The long-lived services a request handler may use, built once per process (src/server.ts). */
export interface AppContext {
  config: Config;
  db: Database;
  /**
   * Where the reads that tolerate a bounded lag go (history, trends, exports, the change
   * summary): the replica of DATABASE_READ_URL when it is caught up, else `db` (src/db/read-replica.ts).
   */
  reads: ReadRouting;
  /**
   * Where time is read when it decides something: rate windows, usage hours, retry_after
   * (src/time.ts; docs/ARCHITECTURE.md, "Time"). The machine's clock in production; tests move it.
   */
  clock: Clock;
  /** The deployment's key (src/db/id-key.ts): what idempotent answers are sealed with, by a key derived from it. */
  deploymentKey: Buffer;
  limiter: RateLimiter;
  keys: KeyResolver;
  usage: UsageRecorder;
  /** Fetches pages for checks and the extract dry run (HTTP, or a browser for render_js). */
  fetcher: Fetcher;
  /** Reads prices from fetched pages, on a thread of its own where there is a core to spare. */
  extractor: Extractor;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 and /v1 route. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** false: the request is authenticated but not counted against the hourly limit. */
    countsTowardLimit?: boolean;
  }
}
