/**
 * The one error hierarchy. Services throw ApiError (through the ERRORS factories); the error
 * handler (src/http/error-handler.ts) is the only place that turns errors into HTTP responses,
 * with `errorBody`, the one place that turns an ApiError into JSON. The CLI's channel to the
 * server (src/owner-channel/server.ts) answers its errors with the same function.
 */
export const ERROR_CODES = {
  invalid_json: 400,
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  email_disabled: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code];
  }
}

/**
 * The spec's 429 (part 7). Its body is fixed by the spec, not our Error shape, so the error
 * carries what that body needs; `retryAfter` is counted once, for the body and `Retry-After` alike.
 */
export class RateLimitedError extends ApiError {
  constructor(
    readonly limit: number,
    readonly reset: number,
    readonly retryAfter: number,
  ) {
    super('rate_limited', 'Rate limit exceeded', undefined, { 'Retry-After': String(retryAfter) });
    this.name = 'RateLimitedError';
  }
}

const REALM = 'Bearer realm="pricehound"';

/** Why a request is not authenticated, with its RFC 6750 challenge: no error code when no credentials were sent (section 3.1). */
const UNAUTHORIZED = {
  missing: { message: 'Missing API key: send "Authorization: Bearer <key>"', challenge: REALM },
  malformed: {
    message: 'Malformed Authorization header: expected "Bearer <key>"',
    challenge: `${REALM}, error="invalid_request"`,
  },
  invalid: { message: 'The API key is not valid or has been revoked', challenge: `${REALM}, error="invalid_token"` },
} as const;

/**
 * A valid key asking for more than it holds: a `read` key on an operation that writes, or any key
 * asking to make a key above its own plan. RFC 6750's name for it, and its challenge where the
 * missing privilege is a scope (section 3.1).
 */
const INSUFFICIENT_SCOPE = {
  scope: {
    message:
      'This API key has the read scope: it may read, preview alerts and try extraction, not change anything. Use a full key',
    challenge: `${REALM}, error="insufficient_scope", scope="full"`,
  },
  keys: {
    message: 'Only full keys manage API keys; this key has the read scope',
    challenge: `${REALM}, error="insufficient_scope", scope="full"`,
  },
} as const;

export const ERRORS = {
  invalidJson: (why = 'The request body is not valid JSON') => new ApiError('invalid_json', why),
  invalidRequest: (message: string, details?: ErrorDetail[]) => new ApiError('invalid_request', message, details),
  unauthorized: (why: keyof typeof UNAUTHORIZED) =>
    new ApiError('unauthorized', UNAUTHORIZED[why].message, undefined, {
      'WWW-Authenticate': UNAUTHORIZED[why].challenge,
    }),
  /** A read key on an operation that needs a full one (src/auth/scopes.ts); `keys`: the key management operations. */
  insufficientScope: (why: keyof typeof INSUFFICIENT_SCOPE) =>
    new ApiError('insufficient_scope', INSUFFICIENT_SCOPE[why].message, undefined, {
      'WWW-Authenticate': INSUFFICIENT_SCOPE[why].challenge,
    }),
  /** A key asking for a key above its own plan: what it may not grant, named in `details`. */
  planAboveKey: (asked: string, own: string) =>
    new ApiError('insufficient_scope', `A key can only make keys of its own plan (${own}) or below`, [
      {
        field: 'plan',
        message: `must be at most ${own}, the plan of the key making this request (asked for ${asked})`,
      },
    ]),
  notFound: (what = 'Resource', details?: ErrorDetail[]) => new ApiError('not_found', `${what} not found`, details),
  routeNotFound: (method: string, url: string) => new ApiError('not_found', `No route for ${method} ${url}`),
  methodNotAllowed: (method: string, allow: string[]) =>
    new ApiError(
      'method_not_allowed',
      `Method ${method} is not allowed here; allowed: ${allow.join(', ')}`,
      undefined,
      {
        Allow: allow.join(', '),
      },
    ),
  conflict: (message: string, details?: ErrorDetail[]) => new ApiError('conflict', message, details),
  /** A conflict that ends by itself (work on the resource in progress): the 409 says when to ask again. */
  inProgress: (message: string, retryAfterSeconds: number) =>
    new ApiError('conflict', message, undefined, { 'Retry-After': String(retryAfterSeconds) }),
  /** SMTP_URL is not set: nothing can be mailed (docs/EMAIL.md). */
  emailDisabled: () =>
    new ApiError(
      'email_disabled',
      'Email is off on this server: its operator has not set SMTP_URL. Subscriptions can be listed and deleted, not created or re-enabled',
    ),
  /** Something that was, and is no more: a used link, a subscription locked by wrong codes. */
  gone: (message: string, details?: ErrorDetail[]) => new ApiError('gone', message, details),
  payloadTooLarge: (limit: number) =>
    new ApiError('payload_too_large', `The request body is larger than the limit of ${limit} bytes`),
  unsupportedMediaType: (type: string | undefined) =>
    new ApiError(
      'unsupported_media_type',
      type
        ? `Content-Type ${type} is not supported; send application/json`
        : 'A request body needs Content-Type: application/json',
    ),
  requestTimeout: (ms: number) =>
    new ApiError('request_timeout', `The request was not received in full within ${ms} ms; the connection is closed`),
  headersTooLarge: () => new ApiError('headers_too_large', 'The request headers are larger than the server accepts'),
  unsupportedEncoding: (encoding: string) =>
    new ApiError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not supported; send gzip, deflate, br or no Content-Encoding`,
    ),
  validation: (details: ErrorDetail[], message = 'The request has invalid fields') =>
    new ApiError('validation_failed', message, details),
  /** A query string that parses but asks for something invalid: the same 422 as a query the schema refuses. */
  invalidQuery: (details: ErrorDetail[]) =>
    new ApiError('validation_failed', 'The query has invalid parameters', details),
  /** A window of `limit` requests, used up until `reset` (unix seconds), refused at `nowMs` (the limiter's clock). */
  rateLimited: (limit: number, reset: number, nowMs: number) =>
    new RateLimitedError(limit, reset, Math.max(1, reset - Math.floor(nowMs / 1000))),
  internal: (message = 'Internal server error; the request id identifies it in our logs') =>
    new ApiError('internal', message),
  unavailable: (message = 'The service is temporarily unavailable; retry shortly') =>
    new ApiError('unavailable', message),
  /** Heavy work of this kind is at its limit for now (src/http/heavy-lane.ts). */
  busy: (message: string, retryAfterSeconds: number) =>
    new ApiError('unavailable', message, undefined, { 'Retry-After': String(retryAfterSeconds) }),
} as const;

/** The JSON body of an error: our Error shape, or for a 429 the spec's own. */
export function errorBody(e: ApiError, requestId: string) {
  if (e instanceof RateLimitedError) {
    return {
      error: e.message,
      status: e.status,
      retry_after: e.retryAfter,
      limit: e.limit,
      remaining: 0,
      reset: e.reset,
    };
  }
  return {
    error: e.message,
    status: e.status,
    code: e.code,
    ...(e.details && e.details.length > 0 ? { details: e.details } : {}),
    request_id: requestId,
  };
}
