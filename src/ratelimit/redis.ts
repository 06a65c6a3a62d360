import { EventEmitter, once } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  MemoryRateLimiter,
  type Outcome,
  type RateLimiter,
  stateOf,
  type Window,
  type WindowState,
  windowStart,
} from './limiter.js';
import { systemClock } from '../time.js';
import { LeaseBook, RETURN_AFTER_MS, type UnusedBlock } from './quota-leases.js';

// Keys name their window start, so a new window is a new key: no reset race, and INCR plus
// PEXPIREAT in one script is atomic. Every check made during one turn of the event loop goes to
// Redis in ONE script call (see Batch below). ARGV[1] is the channel that announces failed
// authentications; then per op, KEYS holds a triple (guard, counter, counter's free list), where
// an empty guard means none, and ARGV five values (guard limit, counter expiry in ms, mode,
// counter limit, counts wanted). Each op answers four numbers {flag, first, last, guard count}:
//   guard at its limit        {-1, guard count, guard count, g}; nothing counted
//   peek                      {0, counted and not returned, same, g}
//   hit / fail                {1, first, last, g}: counts first..last are the caller's. Past the
//                             limit a count returned to the free list (quota-leases.ts) is reused
//                             first; a hot key may get up to `wanted` counts, never more than
//                             1/32 of what is left of the limit. `fail` also announces itself.
// g is -1 when the op has no guard.
const BATCH = `
local out = {}
for i = 1, #KEYS, 3 do
  local a = (i - 1) / 3 * 5 + 2
  local counter, free = KEYS[i + 1], KEYS[i + 2]
  local mode, limit, wanted = ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local g = -1
  if KEYS[i] ~= '' then g = tonumber(redis.call('GET', KEYS[i]) or '0') end
  local flag, first, last = 1, 0, 0
  if g >= 0 and g >= tonumber(ARGV[a]) then
    flag, first, last = -1, g, g
  elseif mode == 'peek' then
    local n = tonumber(redis.call('GET', counter) or '0')
    for _, r in ipairs(redis.call('LRANGE', free, 0, -1)) do
      local lo, hi = string.match(r, '(%d+):(%d+)')
      n = n - (tonumber(hi) - tonumber(lo) + 1)
    end
    flag, first, last = 0, n, n
  else
    local n = tonumber(redis.call('GET', counter) or '0')
    local r = false
    if n >= limit then r = redis.call('LPOP', free) end
    if r then
      local lo, hi = string.match(r, '(%d+):(%d+)')
      lo, hi = tonumber(lo), tonumber(hi)
      if lo < hi then redis.call('LPUSH', free, (lo + 1) .. ':' .. hi) end
      first, last = lo, lo
    else
      local take = 1
      if wanted > 1 then take = math.max(1, math.min(wanted, math.floor((limit - n) / 32))) end
      last = redis.call('INCRBY', counter, take)
      first = last - take + 1
      if first == 1 then redis.call('PEXPIREAT', counter, ARGV[a + 1]) end
      if mode == 'fail' then redis.call('PUBLISH', ARGV[1], counter) end
    end
  end
  out[#out + 1] = flag
  out[#out + 1] = first
  out[#out + 1] = last
  out[#out + 1] = g
end
return out`;

type Scripts = Redis & { phBatch(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]> };

interface Op {
  guardKey: string;
  key: string;
  guardLimit: number;
  expireAt: number;
  mode: 'hit' | 'peek' | 'fail';
  limit: number;
  wanted: number;
  resolve(result: Reply): void;
  reject(err: unknown): void;
}

type Reply = [flag: number, first: number, last: number, guard: number];

/**
 * Failed-authentication counters (guards) known to be zero, so a request from that address may
 * count from a lease without asking Redis about its address. Every failed authentication is
 * announced on a channel; an announcement, or losing the channel, makes the address unknown
 * again. An answer only marks a guard clean if no announcement arrived while it was on its way
 * (the epoch), since the announcement may be of a failure Redis counted after that answer.
 */
class CleanGuards {
  private readonly clean = new Map<string, number>();
  epoch = 0;

  has(key: string, now: number): boolean {
    const end = this.clean.get(key);
    return end !== undefined && end > now;
  }

  set(key: string, windowEnd: number, epoch: number): void {
    if (epoch !== this.epoch) return;
    if (this.clean.size >= 10_000) this.clean.clear();
    this.clean.set(key, windowEnd);
  }

  dirty(key: string): void {
    this.clean.delete(key);
    this.epoch++;
  }

  clear(): void {
    this.clean.clear();
    this.epoch++;
  }
}

/** Most ops sent in one script call; a fuller queue is sent in several. */
const MAX_BATCH = 256;

interface RedisLimiterEvents {
  /** Redis failed; counting per process from now on. */
  degraded: [err: unknown];
  /** A command succeeded again after `degraded`. */
  recovered: [];
  /** The connection to Redis is (re-)established; the next request will try it. */
  connected: [];
  /** The connection to Redis closed (ioredis reconnects by itself). */
  disconnected: [];
  /** A failed authentication was announced (by any process): `key` is its counter. */
  announced: [key: string];
  /** Unused lease blocks went back to Redis: `counts` in all. */
  returned: [counts: number];
  /** Subscribed to the failed-authentication channel: leases may be used from now on. */
  subscribed: [];
}

/** While degraded, how often one request may try Redis again if the connection looks ready. */
const PROBE_INTERVAL_MS = 1_000;

/**
 * Counters in Redis, shared by every API process. If Redis cannot be reached the limiter falls
 * back to in-process counters (limits then hold per process) and logs it, rather than failing
 * requests; it goes back to Redis as soon as Redis answers again.
 *
 * That holds from the start too: `connect()` does not throw when Redis is down, the process
 * starts degraded and ioredis keeps reconnecting. A rate limiter protects the service; it should
 * not be what keeps every API process from starting (or crash-loop them) while Redis restarts.
 * While degraded, requests do not wait on Redis: they count in memory until the connection is
 * ready again, and a connection that is "ready" but does not answer (a hung Redis) is probed by
 * at most one request per second instead of costing every request the command timeout.
 *
 * A hot key costs a round trip per block of requests, not per request: see quota-leases.ts. A request
 * counts from this process's block only while the address it comes from is known to have no
 * failed authentications in its window (CleanGuards), so a block never lets a blocked address
 * through. What that costs in exactness, in a deployment of several processes, is in
 * docs/API-DECISIONS.md ("Rate limits").
 */
export class RedisRateLimiter extends EventEmitter<RedisLimiterEvents> implements RateLimiter {
  private readonly redis: Scripts;
  /** Subscribed to the failed-authentication channel; leases are used only while it is. */
  private readonly sub: Redis;
  private readonly channel: string;
  private subscribed = false;
  private readonly leases: LeaseBook;
  private readonly guards = new CleanGuards();
  private readonly sweeper: NodeJS.Timeout;
  private readonly fallback: MemoryRateLimiter;
  private degraded = false;
  /** Script calls made, and requests counted from a leased block instead (for tests and metrics). */
  readonly stats = { redisCalls: 0, leasedCounts: 0 };
  private queue: Op[] = [];
  private probeAt = 0;

  constructor(
    url: string,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly prefix = 'pricehound:rl:',
    /** The clock of the windows, and the one leases measure traffic and idleness with (the application's, src/time.ts; tests move it). */
    private readonly now: () => number = systemClock.now,
  ) {
    super();
    this.leases = new LeaseBook(now);
    this.fallback = new MemoryRateLimiter(now);
    this.redis = new Redis(url, {
      // no autopipelining: checks are already batched per event-loop turn (flush below)
      enableAutoPipelining: false,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: 500,
      connectTimeout: 2_000,
      lazyConnect: true,
    }) as Scripts;
    this.redis.defineCommand('phBatch', { lua: BATCH });
    this.redis.on('error', () => undefined); // surfaced through failed commands below
    this.redis.on('ready', () => {
      this.probeAt = 0; // reconnected: the next request tries Redis at once
      this.emit('connected');
    });
    this.redis.on('close', () => this.emit('disconnected'));

    this.channel = `${prefix}authfail`;
    // We subscribe on every 'ready' ourselves: ioredis's own resubscription rejects unhandled
    // when the connection drops again before it is written (no offline queue).
    this.sub = this.redis.duplicate({ autoResubscribe: false });
    this.sub.on('error', () => undefined);
    this.sub.on('message', (_channel: string, key: string) => {
      this.guards.dirty(key);
      this.emit('announced', key);
    });
    this.sub.on('ready', () => {
      this.sub.subscribe(this.channel).then(
        () => {
          this.guards.clear(); // answers sent before this could predate an announcement we missed
          this.subscribed = true;
          this.emit('subscribed');
        },
        () => undefined,
      );
    });
    this.sub.on('close', () => {
      this.subscribed = false;
      this.guards.clear();
    });
    this.sweeper = setInterval(() => this.giveBack(this.leases.sweep()), RETURN_AFTER_MS / 2);
    this.sweeper.unref();
  }

  /** Connects; if Redis is unreachable, logs it and starts degraded (see the class comment). */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (err) {
      this.degrade(err);
    }
    // Without the channel the limiter is exact but leases nothing; ioredis keeps reconnecting.
    this.sub.connect().catch(() => undefined);
  }

  /** Whether counters are shared through Redis right now (false while degraded). */
  get shared(): boolean {
    return !this.degraded;
  }

  /**
   * An instant of the application clock as the machine's (what PEXPIREAT counts in): equal in
   * production; a moved test clock must not make counters expire early or late.
   */
  private redisTime(clockMs: number): number {
    return clockMs - this.now() + Date.now();
  }

  private keyOf(w: Window, start: number) {
    return `${this.prefix}${w.seconds}:${start}:${w.key}`;
  }

  private useRedis(): boolean {
    if (!this.degraded) return true;
    if (this.redis.status !== 'ready') return false;
    const now = Date.now();
    if (now < this.probeAt) return false;
    this.probeAt = now + PROBE_INTERVAL_MS;
    return true;
  }

  /** Waits for the failed-authentication channel (tests: leases are used only once it is up). */
  async subscribedNow(): Promise<void> {
    if (!this.subscribed) await once(this, 'subscribed');
  }

  /**
   * Queues one op for the batch of this event-loop turn. Under load one HTTP request's check
   * costs ~4.6 us of client CPU this way against ~12.7 us as a script call of its own (scratch
   * measurement with 50 concurrent callers; bench/ has the end-to-end figures), and Redis runs
   * one script per batch instead of one per request. A lone request waits one setImmediate.
   */
  private send(op: Omit<Op, 'resolve' | 'reject'>): Promise<Reply> {
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(() => this.flush());
      this.queue.push({ ...op, resolve, reject });
    });
  }

  private flush(): void {
    const all = this.queue;
    this.queue = [];
    for (let from = 0; from < all.length; from += MAX_BATCH) {
      const ops = all.slice(from, from + MAX_BATCH);
      const keys: string[] = [];
      const args: (string | number)[] = [this.channel];
      for (const o of ops) {
        keys.push(o.guardKey, o.key, `${o.key}:free`);
        args.push(o.guardLimit, o.expireAt, o.mode, o.limit, o.wanted);
      }
      this.stats.redisCalls++;
      this.redis.phBatch(keys.length, ...keys, ...args).then(
        (out) => ops.forEach((o, i) => o.resolve([out[4 * i]!, out[4 * i + 1]!, out[4 * i + 2]!, out[4 * i + 3]!])),
        (err: unknown) => ops.forEach((o) => o.reject(err)),
      );
    }
  }

  take(window: Window, guard: Window, mode: 'hit' | 'peek'): Outcome | Promise<Outcome> {
    if (!this.useRedis()) return this.fallback.take(window, guard, mode);
    const now = this.now();
    const start = windowStart(now, window.seconds);
    const gStart = windowStart(now, guard.seconds);
    const key = this.keyOf(window, start);
    const guardKey = this.keyOf(guard, gStart);
    if (mode === 'hit') {
      this.leases.note(key, start + window.seconds * 1000);
      if (this.subscribed && this.guards.has(guardKey, now)) {
        const leased = this.fromLease(key, window, start);
        if (leased !== undefined) return leased;
        const refill = this.leases.refilling(key) ?? this.refill(key, window, start);
        if (refill) {
          return refill.then(
            () =>
              this.fromLease(key, window, start) ?? this.roundTrip(window, guard, mode, key, start, guardKey, gStart),
          );
        }
      }
    }
    return this.roundTrip(window, guard, mode, key, start, guardKey, gStart);
  }

  /** A count from this process's block of `key`, if it holds one (and the next block asked for when due). */
  private fromLease(key: string, window: Window, start: number): Outcome | undefined {
    const n = this.leases.take(key);
    if (n === undefined) return undefined;
    this.stats.leasedCounts++;
    this.refill(key, window, start);
    return { state: stateOf(n, window, start) };
  }

  private async roundTrip(
    window: Window,
    guard: Window,
    mode: 'hit' | 'peek',
    key: string,
    start: number,
    guardKey: string,
    gStart: number,
  ): Promise<Outcome> {
    const epoch = this.guards.epoch;
    try {
      const [flag, first, , g] = await this.send(this.counterOp(key, window, start, mode, 1, guardKey, guard.limit));
      this.recovered();
      if (g === 0) this.guards.set(guardKey, gStart + guard.seconds * 1000, epoch);
      if (flag === -1) return { blocked: stateOf(first, guard, gStart) };
      if (mode === 'peek') return { state: stateOf(first - this.leases.unused(key), window, start, false) };
      return { state: stateOf(first, window, start) };
    } catch (err) {
      this.degrade(err);
      return this.fallback.take(window, guard, mode);
    }
  }

  /** One op on `key` (the counter of `window` starting at `start`), checked against a guard if given. */
  private counterOp(
    key: string,
    window: Window,
    start: number,
    mode: Op['mode'],
    wanted: number,
    guardKey = '',
    guardLimit = 0,
  ): Omit<Op, 'resolve' | 'reject'> {
    // The counter outlives its window by a minute: clocks of different processes may disagree.
    return {
      guardKey,
      key,
      guardLimit,
      expireAt: this.redisTime(start + window.seconds * 1000 + 60_000),
      mode,
      limit: window.limit,
      wanted,
    };
  }

  /**
   * Asks Redis for the next block of a hot key's counts, if it is time to (LeaseBook.refillSize);
   * returns the pending answer, or undefined when none was asked for. A failed ask is left to
   * the next request's own round trip to notice.
   */
  private refill(key: string, window: Window, start: number): Promise<void> | undefined {
    const size = this.leases.refillSize(key);
    if (size === 0) return undefined;
    const asked = this.send(this.counterOp(key, window, start, 'hit', size)).then(
      ([, first, last]) => this.leases.granted(key, first, last),
      () => undefined,
    );
    const pending = asked.finally(() => this.leases.setRefill(key, undefined));
    this.leases.setRefill(key, pending);
    return pending;
  }

  /** Counts a failed authentication against `window` and announces it to the other processes. */
  async hit(window: Window): Promise<WindowState> {
    if (!this.useRedis()) return this.fallback.hit(window);
    const start = windowStart(this.now(), window.seconds);
    const key = this.keyOf(window, start);
    this.guards.dirty(key);
    try {
      const [, count] = await this.send(this.counterOp(key, window, start, 'fail', 1));
      this.recovered();
      return stateOf(count, window, start);
    } catch (err) {
      this.degrade(err);
      return this.fallback.hit(window);
    }
  }

  /** Hands unused lease blocks back to Redis's free lists (fire and forget: a lost one only wastes counts). */
  private giveBack(blocks: UnusedBlock[]): Promise<unknown> {
    if (blocks.length === 0 || this.degraded) return Promise.resolve();
    const m = this.redis.multi();
    for (const b of blocks)
      m.rpush(`${b.key}:free`, `${b.next}:${b.last}`).pexpireat(`${b.key}:free`, this.redisTime(b.windowEnd + 60_000));
    const counts = blocks.reduce((sum, b) => sum + b.last - b.next + 1, 0);
    return m.exec().then(
      () => this.emit('returned', counts),
      () => undefined,
    );
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  private degrade(err: unknown) {
    this.probeAt = Date.now() + PROBE_INTERVAL_MS;
    this.leases.clear();
    if (!this.degraded) {
      this.degraded = true;
      this.log.warn({ err }, 'redis unreachable: rate limits counted per process until it returns');
      this.emit('degraded', err);
    }
  }

  private recovered() {
    if (this.degraded) {
      this.degraded = false;
      this.log.info('redis reachable again: rate limits shared across processes');
      this.emit('recovered');
    }
  }

  /** Gives unused lease blocks back (for at most half a second), then disconnects. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.fallback.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.giveBack(this.leases.sweep(true)),
      new Promise((resolve) => (timer = setTimeout(resolve, 500))),
    ]);
    clearTimeout(timer);
    this.sub.disconnect();
    this.redis.disconnect();
  }
}
