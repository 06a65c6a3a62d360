/**
 * What a call can throw. An answer that is an error (after any retries) is an `ApiError`: the
 * service's error shape (`error`, `status`, `code`, `details`, `request_id`), or for a 429 the
 * spec's body (`retry_after`, `limit`, `remaining`, `reset`), a `RateLimitError`. A request that
 * got no answer is a `NetworkError`, or a `TimeoutError` when the client's timeout cut it.
 * Aborting through your own AbortSignal rejects with the signal's reason, as fetch does.
 */

export interface ErrorDetail {
  field: string;
  message: string;
}

export class PricehoundError extends Error {
  override name = 'PricehoundError';
}

export class ApiError extends PricehoundError {
  override name = 'ApiError';
  constructor(
    message: string,
    /** The HTTP status. */
    readonly status: number,
    /** The service's error code (`not_found`, `validation_failed`, `rate_limited`, ...). */
    readonly code: string,
    readonly details: ErrorDetail[],
    /** The body's `request_id`, else the X-Request-Id header: quote it when asking about a failure. */
    readonly requestId: string | undefined,
    /** The response (its body already read). */
    readonly response: Response,
    /** The parsed body, when it was JSON. */
    readonly body: unknown,
  ) {
    super(message);
  }
}

export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  constructor(
    message: string,
    requestId: string | undefined,
    response: Response,
    body: unknown,
    /** Seconds to wait before the limit lets a request through (body `retry_after`, else Retry-After). */
    readonly retryAfter: number | undefined,
    readonly limit: number | undefined,
    /** Unix seconds when the window resets. */
    readonly reset: number | undefined,
  ) {
    super(message, 429, 'rate_limited', [], requestId, response, body);
  }
}

export class NetworkError extends PricehoundError {
  override name = 'NetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The error of an answer that is not a success; `text` is its body. */
export function errorOf(response: Response, text: string): ApiError {
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (a proxy's HTML page, say): keep the text
  }
  const b = isRecord(body) ? body : {};
  const requestId =
    typeof b.request_id === 'string' ? b.request_id : (response.headers.get('x-request-id') ?? undefined);
  const message =
    typeof b.error === 'string'
      ? b.error
      : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  if (response.status === 429) {
    const header = retryAfterSeconds(response.headers.get('retry-after'));
    return new RateLimitError(
      message,
      requestId,
      response,
      body,
      num(b.retry_after) ?? header,
      num(b.limit),
      num(b.reset),
    );
  }
  const details = Array.isArray(b.details)
    ? b.details.filter(isRecord).map((d) => ({ field: String(d.field ?? ''), message: String(d.message ?? '') }))
    : [];
  const code = typeof b.code === 'string' ? b.code : `http_${response.status}`;
  return new ApiError(message, response.status, code, details, requestId, response, body);
}

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}
