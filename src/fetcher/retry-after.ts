/**
 * A site's Retry-After, as both fetchers honour it: a 429 or 503 pauses the host in the shared
 * per-host limiter, for at most MAX_RETRY_AFTER_MS, and the FetchError carries the pause.
 */

/** Longest Retry-After honoured, in ms: a site asking for a day is checked again in 6 h. */
export const MAX_RETRY_AFTER_MS = 6 * 3_600_000;

/** Retry-After as ms from now: delta-seconds or an HTTP-date; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface RetryAfterRules {
  /** Pause after a 429 without a usable Retry-After, in ms (unset: no pause). */
  missing429Ms?: number;
  /** Longest pause honoured, in ms (default MAX_RETRY_AFTER_MS). */
  maxMs?: number;
}

/**
 * The pause a response asks for, in ms: only a 429 or 503 asks, through its Retry-After header
 * value `header`; capped at `rules.maxMs`. undefined when the response asks for none.
 */
export function retryAfterPause(
  status: number,
  header: string | undefined,
  rules: RetryAfterRules = {},
): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  let ms = parseRetryAfter(header);
  if (ms === undefined && status === 429) ms = rules.missing429Ms;
  if (ms === undefined) return undefined;
  return Math.min(ms, rules.maxMs ?? MAX_RETRY_AFTER_MS);
}

/** The end of an http_error message that tells the user about the pause ('' without one). */
export function retryAfterNote(ms: number | undefined): string {
  return ms !== undefined ? `; it asks us to wait ${Math.ceil(ms / 1000)} s (Retry-After)` : '';
}
