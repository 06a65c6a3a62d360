import { Type, type TSchema } from 'typebox';
import { ERROR_CODES } from './errors.js';

/** Shapes shared by every route: error bodies, rate-limit headers, list envelopes. */

export const ErrorDetailSchema = Type.Object(
  {
    field: Type.String({ maxLength: 300, description: 'The field, e.g. `base_price` or `products[3].sku`' }),
    message: Type.String({ maxLength: 1000 }),
  },
  { additionalProperties: false },
);

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ maxLength: 2000, description: 'A message for a person' }),
    status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599 }),
    code: Type.String({ enum: Object.keys(ERROR_CODES), description: 'A stable machine-readable code' }),
    details: Type.Optional(Type.Array(ErrorDetailSchema, { maxItems: 1000 })),
    request_id: Type.String({
      maxLength: 128,
      pattern: '^[A-Za-z0-9._:-]{1,128}$',
      description: 'Also in the `X-Request-Id` header and in our logs',
    }),
  },
  { title: 'Error', additionalProperties: false },
);

/** The spec's 429 body, exactly (spec part 7). */
export const RateLimitBodySchema = Type.Object(
  {
    error: Type.String({ maxLength: 200, description: '"Rate limit exceeded"' }),
    status: Type.Integer({ format: 'int32', minimum: 429, maximum: 429 }),
    retry_after: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 86_400,
      description: 'Seconds until the window resets',
    }),
    limit: Type.Integer({ format: 'int32', minimum: 0, maximum: 1_000_000_000 }),
    remaining: Type.Integer({ format: 'int32', minimum: 0, maximum: 0 }),
    reset: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: 99_999_999_999,
      description: 'Unix seconds when the window resets',
    }),
  },
  { title: 'RateLimitExceeded', additionalProperties: false },
);

const int = (description: string) => ({
  type: 'integer',
  format: 'int64',
  minimum: 0,
  maximum: 99_999_999_999,
  description,
});

/**
 * Response headers. Each is a JSON Schema for the header's value plus a description; the
 * OpenAPI document (src/openapi) turns them into header objects.
 */
export const rateLimitHeaders = {
  'X-RateLimit-Limit': int(
    'The hourly request limit of the key. On a 401, and on the 429 of an address blocked for failed authentications: ' +
      'the failed authentications the calling address may make per window (`AUTH_FAILURE_LIMIT`)',
  ),
  'X-RateLimit-Remaining': int(
    'Requests remaining in the current hour. On a 401: failed authentications the calling address has left in the ' +
      'window (0: the next request from it is refused with 429, whatever key it sends)',
  ),
  'X-RateLimit-Reset': int(
    "Unix timestamp (seconds) when the current window resets: the key's hour, or on a 401 and on the 429 of a " +
      'blocked address the failed-authentication window',
  ),
};

/**
 * Every response, whatever its status (src/http/cors.ts). Documented with the other headers
 * every response carries, by src/openapi/operation.ts and components.ts.
 */
export const allowOriginHeader = {
  'Access-Control-Allow-Origin': {
    type: 'string',
    enum: ['*'],
    description:
      'CORS: any origin may read this response. The API authenticates with a Bearer key in a header, never with ' +
      'cookies, so credentials mode is off. Preflights (OPTIONS) are answered 204 on every path without a key; ' +
      '`Access-Control-Expose-Headers` lists the headers of this document that scripts may read.',
  },
};

export const requestIdHeader = {
  'X-Request-Id': {
    type: 'string',
    maxLength: 128,
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
    description:
      'The request id, also in logs and error bodies. A plain `X-Request-Id` sent by the client (up to 128 letters, digits, `._:-`) is kept.',
  },
};

/**
 * What every response of every route carries, whatever its status: added to each documented
 * response by src/openapi/operation.ts (and to the 405 component by src/openapi/components.ts).
 */
export const everyResponseHeaders = { ...requestIdHeader, ...allowOriginHeader };

export const retryAfterHeader = {
  'Retry-After': {
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: 86_400,
    description: 'Seconds to wait before retrying',
  },
};

export const wwwAuthenticateHeader = {
  'WWW-Authenticate': {
    type: 'string',
    maxLength: 200,
    pattern: '^Bearer realm="pricehound"',
    description:
      'The Bearer challenge (RFC 6750): on a 401 with `error="invalid_request"` or `error="invalid_token"` when a key was sent; ' +
      'on the 403 of a read key `error="insufficient_scope", scope="full"`',
  },
};

export const locationHeader = {
  Location: { type: 'string', format: 'uri-reference', maxLength: 200, description: 'Path of the created resource' },
};

/** A response entry carrying the rate-limit and request-id headers. */
export function withHeaders<T extends TSchema>(schema: T, description: string, extra: Record<string, object> = {}) {
  return { ...schema, description, headers: { ...rateLimitHeaders, ...requestIdHeader, ...extra } } as T;
}

const errorDescriptions: Record<number, string> = {
  400: 'Malformed request (unparseable JSON or query)',
  401:
    'Missing, malformed, unknown or revoked API key. The X-RateLimit headers describe the failed-authentication ' +
    'budget of the calling address, not a key: Limit failures per window, Remaining failures left, Reset the end ' +
    'of the window. Once none remain, the address gets 429 until Reset.',
  403:
    'The key may not do this (`insufficient_scope`): a `read` key on an operation that changes something, or on ' +
    'the API keys; or a key asking for a key above its own plan',
  404: 'No such resource in this account',
  405: 'The path exists but not with this method',
  409: 'Conflict with the current state (duplicate, idempotency key reuse)',
  410: 'Gone: a link already used, or a subscription locked by wrong codes (`gone`)',
  413: 'Request body over the size limit',
  415: 'Request body is not JSON',
  422: 'Well-formed JSON that breaks the schema; `details` names each field',
  500: 'Internal error (logged with the request id)',
  503: 'A dependency is down; retry shortly',
};

const REQUEST_ID_EXAMPLE = 'req_6HFvjVq0Z3nJ1kQyWm8tLp2x';

/** One realistic body per status, shown in the OpenAPI document. */
const errorExamples: Record<number, { error: string; code: string; details?: { field: string; message: string }[] }> = {
  400: { error: 'The request body is not valid JSON', code: 'invalid_json' },
  401: { error: 'The API key is not valid or has been revoked', code: 'unauthorized' },
  403: { error: 'Only full keys manage API keys; this key has the read scope', code: 'insufficient_scope' },
  404: { error: 'Product not found', code: 'not_found' },
  405: { error: 'Method POST is not allowed here; allowed: DELETE, GET, HEAD, PATCH, PUT', code: 'method_not_allowed' },
  409: {
    error: 'A product with this SKU already exists in this account',
    code: 'conflict',
    details: [{ field: 'sku', message: 'is already used by prod_01jf8x2k7m3n4p5q6r7s8t9v0w' }],
  },
  413: { error: 'The request body is larger than the limit of 1048576 bytes', code: 'payload_too_large' },
  415: { error: 'Content-Type text/plain is not supported; send application/json', code: 'unsupported_media_type' },
  422: {
    error: 'The request has invalid fields',
    code: 'validation_failed',
    details: [{ field: 'base_price', message: 'must be an amount with at most 4 decimal places' }],
  },
  500: { error: 'Internal server error; the request id identifies it in our logs', code: 'internal' },
  503: { error: 'The service is temporarily unavailable; retry shortly', code: 'unavailable' },
};

/** The shared Error body as a response: its description, headers and an example for `status`. */
export function errorResponse(
  status: number,
  headers: Record<string, object>,
  description = errorDescriptions[status] ?? 'Error',
) {
  const ex = errorExamples[status];
  const example = ex && {
    error: ex.error,
    status,
    code: ex.code,
    ...(ex.details ? { details: ex.details } : {}),
    request_id: REQUEST_ID_EXAMPLE,
  };
  return { ...ErrorBodySchema, description, headers, ...(example ? { examples: [example] } : {}) };
}

/**
 * Error responses for an authenticated route. 400, 401, 429, 500 and 503 are always included,
 * each with the rate-limit headers: of the key, or on a 401 (and the 429 of a blocked address)
 * of the address's failed-authentication budget (src/auth/hook.ts).
 */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, unknown> = {};
  for (const s of [...new Set([400, 401, 500, 503, ...statuses])].sort()) {
    out[s] =
      s === 401
        ? errorResponse(s, { ...wwwAuthenticateHeader, ...rateLimitHeaders, ...requestIdHeader })
        : errorResponse(s, { ...rateLimitHeaders, ...requestIdHeader });
  }
  out[429] = {
    ...RateLimitBodySchema,
    description:
      'Hourly rate limit of the key exceeded (the X-RateLimit headers describe the key), or too many failed ' +
      'authentications from this address (the X-RateLimit headers and `limit` describe the failure budget, ' +
      'whatever key was sent)',
    headers: { ...retryAfterHeader, ...rateLimitHeaders, ...requestIdHeader },
    examples: [
      { error: 'Rate limit exceeded', status: 429, retry_after: 1260, limit: 1000, remaining: 0, reset: 1767229200 },
    ],
  };
  return out;
}

export const NoContent = { type: 'null', description: 'No content' } as const;
