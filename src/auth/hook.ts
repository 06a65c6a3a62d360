import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { type ApiError, ERRORS } from '../http/errors.js';
import type { Config } from '../config.js';
import type { Outcome, RateLimiter, Window, WindowState } from '../ratelimit/service.js';
import type { UsageRecorder } from '../usage/service.js';
import type { KeyResolver } from './key-cache.js';
import { looksLikeKey, type Principal } from './keys.js';
import { permits, requiredScope } from './scopes.js';
import { routeOf } from '../http/route-options.js';
import type { Clock } from '../time.js';

const HOUR = 3600;

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * Spec part 8's headers. After a valid key they describe the key's hourly window; on a 401, and
 * on the 429 of an address blocked for failed authentications, the failed-authentication budget
 * of the calling address (as GitHub reports its unauthenticated limit).
 */
function rateLimitHeaders(reply: FastifyReply, s: Pick<WindowState, 'limit' | 'remaining' | 'reset'>) {
  // Lower-case names: Fastify lower-cases every name anyway, and one already in lower case is
  // stored without making a new string per response.
  return reply
    .header('x-ratelimit-limit', s.limit)
    .header('x-ratelimit-remaining', s.remaining)
    .header('x-ratelimit-reset', s.reset);
}

/** An address over its failed-authentication budget: the spec's 429, headers describing that budget. */
function addressBlocked(reply: FastifyReply, s: Pick<WindowState, 'limit' | 'reset'>, nowMs: number): ApiError {
  rateLimitHeaders(reply, { limit: s.limit, remaining: 0, reset: s.reset });
  return ERRORS.rateLimited(s.limit, s.reset, nowMs);
}

/** A read key where a full one is needed; on the keys routes, said in their own words. */
function scopeRefused(request: FastifyRequest): ApiError {
  return ERRORS.insufficientScope(routeOf(request).config.managesKeys ? 'keys' : 'scope');
}

function unauthorized(request: FastifyRequest, key: string | undefined): ApiError {
  return ERRORS.unauthorized(!request.headers.authorization ? 'missing' : !key ? 'malformed' : 'invalid');
}

/**
 * Addresses this process has seen blocked for failed authentications, with the end of their
 * window (unix seconds). Lets a flood of guesses be refused without a key lookup or a limiter
 * round trip; bounded so that many addresses cannot grow it without limit.
 */
class BlockedAddresses {
  private readonly until = new Map<string, number>();
  constructor(private readonly maxEntries = 10_000) {}

  get(ip: string, nowSec: number): number | undefined {
    const reset = this.until.get(ip);
    if (reset === undefined) return undefined;
    if (reset > nowSec) return reset;
    this.until.delete(ip);
    return undefined;
  }

  set(ip: string, reset: number): void {
    if (this.until.size >= this.maxEntries) this.until.clear();
    this.until.set(ip, reset);
  }
}

/**
 * Authentication and per-key hourly limits for every API route, before the body is read.
 * Failed authentications are counted per client address; once an address reaches the limit it
 * is refused (429) before its key is even looked at, valid or not, so guessing keys is futile.
 * A 401 reports that budget in the X-RateLimit headers (Remaining: failures left in the window),
 * and so does the 429 of a blocked address (Remaining 0); the counting that yields them is the
 * one the guard needs anyway, so they cost nothing extra.
 *
 * Cost per authenticated request: a hash and a map lookup (src/auth/key-cache.ts), and one
 * limiter call (one Redis round trip that checks the address and counts the key together, or
 * for a hot key, none: src/ratelimit/quota-leases.ts).
 * Routes with `config.countsTowardLimit: false` (GET /usage) are authenticated and get the
 * headers but are neither counted nor refused for the key's limit.
 *
 * Then the key's scope (src/auth/scopes.ts): a `read` key on an operation that needs a `full` one
 * is a 403 `insufficient_scope`, here, before the body is read, so nothing it sent is parsed or
 * written. It is counted like any other request (it was made with a valid key).
 *
 * A callback hook, not an async one: a request whose key is cached and whose count needs no
 * round trip (in-memory counters, or a leased block) goes on synchronously, with no promise and
 * no microtask hop; only lookups and round trips wait. A refusal (401, 403, 429) is an ApiError passed
 * to `done`, which the error handler (src/http/error-handler.ts) answers like every other error;
 * the X-RateLimit headers set here stay on that answer.
 */
export interface AuthDeps {
  limiter: RateLimiter;
  keys: KeyResolver;
  usage: UsageRecorder;
  config: Pick<Config, 'authFailureLimit' | 'authFailureWindowSeconds'>;
  /** The limiter's clock: usage hours and retry_after are read from it. */
  clock: Clock;
}

export function authHook({ limiter, keys, usage, config, clock }: AuthDeps): onRequestHookHandler {
  const blocked = new BlockedAddresses();

  /** The limiter's answer for a known key: headers, usage, and the 429 that refuses the request (undefined: it goes on). */
  function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    principal: Principal,
    outcome: Outcome,
    counts: boolean,
  ): ApiError | undefined {
    if (outcome.blocked) {
      blocked.set(request.ip, outcome.blocked.reset);
      return addressBlocked(reply, outcome.blocked, clock.now());
    }
    const s = outcome.state;
    request.principal = principal;
    rateLimitHeaders(reply, s);
    const now = clock.now();
    usage.used(principal.keyId, now);
    if (counts) {
      usage.record(principal.keyId, now, s.allowed);
      if (!s.allowed) return ERRORS.rateLimited(s.limit, s.reset, now);
    }
    return permits(principal.scope, requiredScope(request.method, routeOf(request).config))
      ? undefined
      : scopeRefused(request);
  }

  const take = (principal: Principal, guard: Window, counts: boolean) =>
    limiter.take(
      { key: `key:${principal.keyId}`, limit: principal.limit, seconds: HOUR },
      guard,
      counts ? 'hit' : 'peek',
    );

  /** A key not in the cache (or none, or a malformed one): look it up, count a failure. Resolves to the refusal, if any. */
  async function lookUp(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string | undefined,
    guard: Window,
  ): Promise<ApiError | undefined> {
    const principal = key && looksLikeKey(key) ? await keys.resolve(key) : undefined;
    if (!principal) {
      const failures = await limiter.hit(guard);
      if (!failures.allowed) {
        blocked.set(request.ip, failures.reset);
        return addressBlocked(reply, failures, clock.now());
      }
      rateLimitHeaders(reply, failures);
      return unauthorized(request, key);
    }
    const counts = routeOf(request).config.countsTowardLimit !== false;
    return admit(request, reply, principal, await take(principal, guard, counts), counts);
  }

  return function authenticate(request, reply, done) {
    const ip = request.ip;
    const now = clock.now();
    const blockedUntil = blocked.get(ip, Math.floor(now / 1000));
    if (blockedUntil !== undefined) {
      done(addressBlocked(reply, { limit: config.authFailureLimit, reset: blockedUntil }, now));
      return;
    }
    const guard: Window = {
      key: `authfail:${ip}`,
      limit: config.authFailureLimit,
      seconds: config.authFailureWindowSeconds,
    };
    const key = bearer(request.headers.authorization);
    const principal = key && looksLikeKey(key) ? keys.cached(key) : undefined;
    if (!principal) {
      lookUp(request, reply, key, guard).then(done, done);
      return;
    }
    const counts = routeOf(request).config.countsTowardLimit !== false;
    const outcome = take(principal, guard, counts);
    if (outcome instanceof Promise) {
      outcome.then((o) => done(admit(request, reply, principal, o, counts)), done);
      return;
    }
    done(admit(request, reply, principal, outcome, counts));
  };
}
