import type { EtagCache } from './etag-cache.js';
import { ApiError, errorOf, NetworkError, RateLimitError, retryAfterSeconds, TimeoutError } from './errors.js';

/**
 * Retries of 429, 503, a 409 that says when to ask again (`Retry-After`: a listing being
 * checked, a request still running) and requests that got no answer; never of other statuses.
 */
export interface RetryOptions {
  /** Attempts per call, the first included (default 5; 1 never retries). */
  maxAttempts?: number;
  /** Attempt n waits a random time up to `baseDelayMs * 2^(n-1)` (full jitter; default 500). */
  baseDelayMs?: number;
  /**
   * The longest wait before one retry, in ms (default 60 000). When the service asks for a longer
   * one (Retry-After, a 429's retry_after) the call fails at once with that error instead.
   */
  maxWaitMs?: number;
}

/** The key's hourly window, from the X-RateLimit-* headers of the last answer. */
export interface Usage {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

/** Calls `onLow` once per window when the remaining requests fall under `remaining`, or under `fraction` of the limit. */
export interface UsageAlert {
  remaining?: number;
  fraction?: number;
  onLow(usage: Usage): void;
}

export interface RetryInfo {
  method: string;
  url: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** The wait before the next attempt, in ms. */
  waitMs: number;
  /** What made the attempt fail: an ApiError (429, 503, a 409 with Retry-After) or a NetworkError. */
  error: ApiError | NetworkError;
}

export interface TransportOptions {
  fetch: (request: Request) => Promise<Response>;
  /** Per attempt, in ms; 0: none. */
  timeoutMs: number;
  retry: Required<RetryOptions>;
  etagCache: EtagCache | undefined;
  usageAlert: UsageAlert | undefined;
  onRetry: ((info: RetryInfo) => void) | undefined;
  onUsage: ((usage: Usage) => void) | undefined;
  onError: ((error: ApiError | NetworkError) => void) | undefined;
}

const RETRIED = new Set([429, 503]);
/** Retried only when the answer says when (Retry-After): its conflict ends by itself. */
const RETRIED_WITH_RETRY_AFTER = new Set([409]);

/** A random UUID; crypto.randomUUID needs a secure context in browsers (a dashboard over plain http has none). */
function uuid(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** JSON (or no body): read whole and under the attempt's timeout. Anything else (a CSV export) is passed on as a stream. */
const isJson = (response: Response) => {
  const type = response.headers.get('content-type');
  return type === null || /\bjson\b/i.test(type);
};
const NO_BODY = new Set([101, 204, 205, 304]);
const BODY_HEADERS = new Set(['content-length', 'content-type', 'content-encoding', 'transfer-encoding']);

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The `fetch` that openapi-fetch calls: every request goes through it. It adds an
 * Idempotency-Key to each POST (kept across the retries of that call, so the service answers a
 * retry of a request it already did with the first answer instead of doing it twice), serves
 * cached GETs from 304s, times out each attempt, retries, tracks usage, and turns every
 * answer that is not a success into an ApiError.
 */
export class Transport {
  /** The X-RateLimit-* headers seen last (the lowest remaining of the newest window). */
  usage: Usage | undefined;
  private alertedWindow: number | undefined;

  constructor(private readonly options: TransportOptions) {}

  readonly send = async (request: Request): Promise<Response> => {
    try {
      return await this.attempts(request);
    } catch (err) {
      if (err instanceof ApiError || err instanceof NetworkError) this.options.onError?.(err);
      throw err;
    }
  };

  private async attempts(request: Request): Promise<Response> {
    const { etagCache } = this.options;
    const method = request.method.toUpperCase();
    const headers = new Headers(request.headers);
    if (method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', uuid());
    const cacheKey = method === 'GET' && etagCache ? `${headers.get('authorization') ?? ''} ${request.url}` : undefined;
    const cached = cacheKey ? etagCache!.get(cacheKey) : undefined;
    if (cached && !headers.has('if-none-match')) headers.set('if-none-match', cached.etag);
    const body = request.body ? await request.arrayBuffer() : undefined;
    const caller = request.signal;

    for (let attempt = 1; ; attempt++) {
      // The attempt's own signal: the caller's abort, or the timeout, which covers the wait for
      // a JSON answer's whole body but only for a streamed answer's headers.
      const controller = new AbortController();
      const onAbort = () => controller.abort(caller.reason);
      if (caller.aborted) onAbort();
      else caller.addEventListener('abort', onAbort, { once: true });
      let timedOut = false;
      const timer =
        this.options.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              controller.abort(new DOMException('timeout', 'TimeoutError'));
            }, this.options.timeoutMs)
          : undefined;
      let response: Response;
      let bytes: ArrayBuffer | undefined;
      try {
        response = await this.options.fetch(
          new Request(request.url, {
            method,
            headers,
            body,
            signal: controller.signal,
            redirect: request.redirect,
            credentials: 'omit',
          }),
        );
        // Read here, under the attempt's timeout, so that a body cut off is retried like no answer.
        if (!(response.ok && !isJson(response))) bytes = await response.arrayBuffer();
      } catch (err) {
        clearTimeout(timer);
        caller.removeEventListener('abort', onAbort);
        if (caller.aborted) throw caller.reason;
        const error = timedOut
          ? new TimeoutError(`${method} ${request.url}: no answer within ${this.options.timeoutMs} ms`, { cause: err })
          : new NetworkError(`${method} ${request.url}: ${err instanceof Error ? err.message : String(err)}`, {
              cause: err,
            });
        await this.waitOrThrow(attempt, error, undefined, method, request.url, caller);
        continue;
      }
      clearTimeout(timer);
      // A 401's X-RateLimit-* describe the address's failed-authentication budget, not the key's hour.
      if (response.status !== 401) this.observe(response.headers);
      // A streamed success: its body is the caller's to read (the caller's abort still stops it).
      if (bytes === undefined) return response;
      caller.removeEventListener('abort', onAbort);

      if (response.status === 304 && cached) {
        etagCache!.hits++;
        // The cached answer with this answer's headers (rate limits, request id), but its own body's.
        const merged = new Headers(cached.headers);
        response.headers.forEach((v, k) => {
          if (!BODY_HEADERS.has(k)) merged.set(k, v);
        });
        return new Response(cached.body.slice(0), { status: 200, statusText: 'OK', headers: merged });
      }
      const answer = new Response(NO_BODY.has(response.status) ? null : bytes, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
      if (response.ok || response.status === 304) {
        const etag = response.headers.get('etag');
        if (cacheKey && etag && response.status === 200)
          etagCache!.set(cacheKey, { etag, body: bytes, headers: [...response.headers] });
        return answer;
      }
      const error = errorOf(answer, new TextDecoder().decode(bytes));
      const asked =
        error instanceof RateLimitError ? error.retryAfter : retryAfterSeconds(response.headers.get('retry-after'));
      const retried =
        RETRIED.has(response.status) || (RETRIED_WITH_RETRY_AFTER.has(response.status) && asked !== undefined);
      if (!retried) throw error;
      await this.waitOrThrow(attempt, error, asked, method, request.url, caller);
    }
  }

  /** Waits before the next attempt, or throws `error` when there is none or the wait asked for is too long. */
  private async waitOrThrow(
    attempt: number,
    error: ApiError | NetworkError,
    askedSeconds: number | undefined,
    method: string,
    url: string,
    signal: AbortSignal,
  ) {
    const { maxAttempts, baseDelayMs, maxWaitMs } = this.options.retry;
    if (attempt >= maxAttempts) throw error;
    const asked = (askedSeconds ?? 0) * 1000;
    if (asked > maxWaitMs) throw error;
    // Full jitter (a random wait up to the exponential bound), on top of what the service asked
    // for: many clients refused together do not all come back at the same instant.
    const jitter = Math.random() * Math.min(maxWaitMs, baseDelayMs * 2 ** (attempt - 1));
    const waitMs = Math.min(maxWaitMs, asked + jitter);
    this.options.onRetry?.({ method, url, attempt, waitMs, error });
    await sleep(waitMs, signal);
  }

  private observe(headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    const remaining = Number(headers.get('x-ratelimit-remaining'));
    const reset = Number(headers.get('x-ratelimit-reset'));
    if (!headers.has('x-ratelimit-remaining') || ![limit, remaining, reset].every(Number.isFinite)) return;
    // Within a window the count only goes down; concurrent answers can arrive out of order.
    const last = this.usage;
    if (last && (last.reset > reset || (last.reset === reset && last.remaining < remaining))) return;
    this.usage = { limit, remaining, reset };
    this.options.onUsage?.(this.usage);
    const alert = this.options.usageAlert;
    if (!alert || this.alertedWindow === reset) return;
    const under = Math.max(
      alert.remaining ?? -Infinity,
      alert.fraction === undefined ? -Infinity : alert.fraction * limit,
    );
    if (remaining < under) {
      this.alertedWindow = reset;
      alert.onLow({ limit, remaining, reset });
    }
  }
}
