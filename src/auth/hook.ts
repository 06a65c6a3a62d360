import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { Config } from '../config.js';
import type { Outcome, RateLimiter, Window, WindowState } from '../ratelimit/limiter.js';
import type { UsageRecorder } from '../usage/recorder.js';
import type { KeyResolver } from './key-cache.js';
import { looksLikeKey, type Principal } from './keys.js';

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
  return reply.header('x-ratelimit-limit', s.limit).header('x-ratelimit-remaining', s.remaining).header('x-ratelimit-reset', s.reset);
}

/** An address over its failed-authentication budget: the spec's 429, headers describing that budget. */
function addressBlocked(reply: FastifyReply, s: Pick<WindowState, 'limit' | 'reset'>) {
  rateLimitHeaders(reply, { limit: s.limit, remaining: 0, reset: s.reset });
  return tooManyRequests(reply, s);
}

/** The spec's 429 (part 7): `Retry-After` and `retry_after` both count seconds until `reset`. */
function tooManyRequests(reply: FastifyReply, s: Pick<WindowState, 'limit' | 'reset'>) {
  const retryAfter = Math.max(1, s.reset - Math.floor(Date.now() / 1000));
  return reply
    .code(429)
    .header('Retry-After', retryAfter)
    .send({ error: 'Rate limit exceeded', status: 429, retry_after: retryAfter, limit: s.limit, remaining: 0, reset: s.reset });
}

/** 401 with the RFC 6750 challenge: no error code when no credentials were sent (section 3.1). */
function unauthorized(request: FastifyRequest, key: string | undefined): ApiError {
  const realm = 'Bearer realm="pricehound"';
  if (!request.headers.authorization) {
    return new ApiError('unauthorized', 'Missing API key: send "Authorization: Bearer <key>"', undefined, { 'WWW-Authenticate': realm });
  }
  if (!key) {
    return new ApiError('unauthorized', 'Malformed Authorization header: expected "Bearer <key>"', undefined, {
      'WWW-Authenticate': `${realm}, error="invalid_request"`,
    });
  }
  return new ApiError('unauthorized', 'The API key is not valid or has been revoked', undefined, {
    'WWW-Authenticate': `${realm}, error="invalid_token"`,
  });
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
 * for a hot key, none: src/ratelimit/leases.ts).
 * Routes with `config.countsTowardLimit: false` (GET /usage) are authenticated and get the
 * headers but are neither counted nor refused for the key's limit.
 *
 * A callback hook, not an async one: a request whose key is cached and whose count needs no
 * round trip (in-memory counters, or a leased block) goes on synchronously, with no promise and
 * no microtask hop; only lookups and round trips wait. A hook that answers (429) does not call
 * `done`, as Fastify asks of callback hooks that reply.
 */
export interface AuthDeps {
  limiter: RateLimiter;
  keys: KeyResolver;
  usage: UsageRecorder;
  config: Pick<Config, 'authFailureLimit' | 'authFailureWindowSeconds'>;
}

export function authHook({ limiter, keys, usage, config }: AuthDeps): onRequestHookHandler {
  const blocked = new BlockedAddresses();

  /** The limiter's answer for a known key: headers, usage, 429 or not. True when the request goes on. */
  function admit(request: FastifyRequest, reply: FastifyReply, principal: Principal, outcome: Outcome, counts: boolean): boolean {
    if (outcome.blocked) {
      blocked.set(request.ip, outcome.blocked.reset);
      addressBlocked(reply, outcome.blocked);
      return false;
    }
    const s = outcome.state;
    request.principal = principal;
    rateLimitHeaders(reply, s);
    if (!counts) return true;
    usage.record(principal.keyId, Date.now(), s.allowed);
    if (!s.allowed) {
      tooManyRequests(reply, s);
      return false;
    }
    return true;
  }

  const take = (principal: Principal, guard: Window, counts: boolean) =>
    limiter.take({ key: `key:${principal.keyId}`, limit: principal.limit, seconds: HOUR }, guard, counts ? 'hit' : 'peek');

  /** A key not in the cache (or none, or a malformed one): look it up, count a failure. */
  async function lookUp(request: FastifyRequest, reply: FastifyReply, key: string | undefined, guard: Window): Promise<boolean> {
    const principal = key && looksLikeKey(key) ? await keys.resolve(key) : undefined;
    if (!principal) {
      const failures = await limiter.hit(guard);
      if (!failures.allowed) {
        blocked.set(request.ip, failures.reset);
        addressBlocked(reply, failures);
        return false;
      }
      rateLimitHeaders(reply, failures);
      throw unauthorized(request, key);
    }
    const counts = request.routeOptions.config.countsTowardLimit !== false;
    return admit(request, reply, principal, await take(principal, guard, counts), counts);
  }

  return function authenticate(request, reply, done) {
    const ip = request.ip;
    const blockedUntil = blocked.get(ip, Math.floor(Date.now() / 1000));
    if (blockedUntil !== undefined) {
      addressBlocked(reply, { limit: config.authFailureLimit, reset: blockedUntil });
      return;
    }
    const guard: Window = { key: `authfail:${ip}`, limit: config.authFailureLimit, seconds: config.authFailureWindowSeconds };
    const key = bearer(request.headers.authorization);
    const principal = key && looksLikeKey(key) ? keys.cached(key) : undefined;
    if (!principal) {
      lookUp(request, reply, key, guard).then((proceed) => proceed && done(), done);
      return;
    }
    const counts = request.routeOptions.config.countsTowardLimit !== false;
    const outcome = take(principal, guard, counts);
    if (outcome instanceof Promise) {
      outcome.then((o) => admit(request, reply, principal, o, counts) && done(), done);
      return;
    }
    if (admit(request, reply, principal, outcome, counts)) done();
  };
}
