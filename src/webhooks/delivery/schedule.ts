import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../fetcher/retry-after.js';

/** When a failed attempt is tried again (WEBHOOK_RETRY_SCHEDULE, WEBHOOK_RETRY_JITTER_PERCENT). */

export interface RetryRules {
  /** Wait before each retry, in ms; its length is the number of retries. */
  schedule: readonly number[];
  /** Up to this fraction of each wait is added at random (0.2: up to 20 %). */
  jitter: number;
}

/**
 * The wait in ms before the retry that follows a failure at schedule step `retry` (0: the first
 * try of its chain), or undefined when the schedule is exhausted. Never shorter than the answer's
 * Retry-After (`retryAfterMs`, see below).
 */
export function retryDelay(
  rules: RetryRules,
  retry: number,
  retryAfterMs?: number,
  random = Math.random,
): number | undefined {
  const base = rules.schedule[retry];
  if (base === undefined) return undefined;
  const wait = Math.round(base * (1 + rules.jitter * random()));
  return retryAfterMs === undefined ? wait : Math.max(wait, retryAfterMs);
}

/**
 * A Retry-After header value (delta-seconds or an HTTP date) as ms from now, capped as page
 * fetches cap it (MAX_RETRY_AFTER_MS): an endpoint asking for a week is tried again in 6 h.
 */
export function retryAfterMs(header: string | undefined, now = Date.now()): number | undefined {
  const ms = parseRetryAfter(header, now);
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}
