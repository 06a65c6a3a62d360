import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { AppContext } from '../http/context.js';
import type { Window, WindowState } from '../ratelimit/limiter.js';
import { looksLikeKey } from './keys.js';

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
  return reply.header('X-RateLimit-Limit', s.limit).header('X-RateLimit-Remaining', s.remaining).header('X-RateLimit-Reset', s.reset);
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
 */
export function authHook(ctx: AppContext): onRequestAsyncHookHandler {
  const { limiter, keys, usage, config } = ctx;
  const blocked = new BlockedAddresses();
  return async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const guard: Window = { key: `authfail:${request.ip}`, limit: config.authFailureLimit, seconds: config.authFailureWindowSeconds };
    const blockedUntil = blocked.get(request.ip, Math.floor(Date.now() / 1000));
    if (blockedUntil !== undefined) return addressBlocked(reply, { limit: guard.limit, reset: blockedUntil });

    const key = bearer(request.headers.authorization);
    const principal = key && looksLikeKey(key) ? await keys.resolve(key) : undefined;

    if (!principal) {
      const failures = await limiter.hit(guard);
      if (!failures.allowed) {
        blocked.set(request.ip, failures.reset);
        return addressBlocked(reply, failures);
      }
      rateLimitHeaders(reply, failures);
      throw unauthorized(request, key);
    }

    const counts = request.routeOptions.config.countsTowardLimit !== false;
    const outcome = await limiter.take({ key: `key:${principal.keyId}`, limit: principal.limit, seconds: HOUR }, guard, counts ? 'hit' : 'peek');
    if (outcome.blocked) {
      blocked.set(request.ip, outcome.blocked.reset);
      return addressBlocked(reply, outcome.blocked);
    }

    const s = outcome.state;
    request.principal = principal;
    rateLimitHeaders(reply, s);
    if (!counts) return;
    usage.record(principal.keyId, Date.now(), s.allowed);
    if (!s.allowed) return tooManyRequests(reply, s);
  };
}
