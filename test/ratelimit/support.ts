import assert from 'node:assert/strict';

/** Shared checks for the rate-limit tests (spec parts 7-8). Not a test file itself. */

export const HOUR_MS = 3_600_000;

/** Unix seconds of the next top of the UTC hour after `ms`. */
export const nextHour = (ms: number) => (Math.floor(ms / HOUR_MS) + 1) * 3600;

type Headers = Record<string, string | string[] | number | undefined>;

/** The three X-RateLimit headers, as numbers; fails when one is missing or not an integer. */
export function rateHeaders(headers: Headers): { limit: number; remaining: number; reset: number } {
  const read = (name: string) => {
    const v = headers[name];
    assert.ok(typeof v === 'string' || typeof v === 'number', `${name} missing`);
    assert.match(String(v), /^\d+$/, `${name} is not a whole number: ${String(v)}`);
    return Number(v);
  };
  return {
    limit: read('x-ratelimit-limit'),
    remaining: read('x-ratelimit-remaining'),
    reset: read('x-ratelimit-reset'),
  };
}

/**
 * Runs `fn` again (once) if the UTC hour changed while it ran: a window that rolls over in the
 * middle of a sequence would reset the counts the test is checking. `fn` must use fresh keys.
 * A failure of `fn` in an hour that changed is not the test's answer either (its assertions see
 * the counts reset): it too is run again (a CI run at 14:00 saw `used` 600 of 1 000 so).
 */
export async function inOneHour<T>(fn: () => Promise<T>): Promise<T> {
  const hour = Math.floor(Date.now() / HOUR_MS);
  const sameHour = () => Math.floor(Date.now() / HOUR_MS) === hour;
  try {
    const result = await fn();
    if (sameHour()) return result;
  } catch (err) {
    if (sameHour()) throw err;
  }
  return fn();
}

/**
 * The spec's 429: status, Retry-After, exactly the six body fields, and retry_after equal to
 * Retry-After and to reset minus the time of the response (within the second it was sent in).
 */
export function assertSpec429(
  res: { statusCode: number; headers: Headers; body: string },
  limit: number,
  sentAtMs: number,
  receivedAtMs: number,
) {
  assert.equal(res.statusCode, 429, res.body);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  const reset = nextHour(sentAtMs);
  assert.ok(typeof body.retry_after === 'number', 'retry_after is a number');
  assert.deepEqual(body, {
    error: 'Rate limit exceeded',
    status: 429,
    retry_after: body.retry_after,
    limit,
    remaining: 0,
    reset,
  });
  const retryAfter = body.retry_after;
  assert.ok(Number.isInteger(retryAfter), 'retry_after is an integer');
  assert.equal(String(res.headers['retry-after']), String(retryAfter), 'Retry-After header equals retry_after');
  assert.ok(retryAfter <= reset - Math.floor(sentAtMs / 1000), `retry_after ${retryAfter} <= reset - now`);
  assert.ok(
    retryAfter >= Math.max(1, reset - Math.ceil(receivedAtMs / 1000)),
    `retry_after ${retryAfter} >= reset - now`,
  );
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return body;
}

/**
 * The 429 byte for byte as the spec writes it (its fields in its order, none of our Error shape's
 * `code` or `request_id`), with the headers every answer carries still on it.
 */
export function assertExact429(
  res: { statusCode: number; headers: Headers; body: string },
  limit: number,
  sentAtMs: number,
) {
  assert.equal(res.statusCode, 429, res.body);
  const retryAfter = Number(res.headers['retry-after']);
  const reset = nextHour(sentAtMs);
  assert.equal(
    res.body,
    JSON.stringify({ error: 'Rate limit exceeded', status: 429, retry_after: retryAfter, limit, remaining: 0, reset }),
  );
  assert.deepEqual(rateHeaders(res.headers), { limit, remaining: 0, reset });
  assert.match(String(res.headers['x-request-id']), /^req_/);
  assert.equal(res.headers['access-control-allow-origin'], '*');
  assert.match(String(res.headers['access-control-expose-headers']), /\bRetry-After\b/);
}
