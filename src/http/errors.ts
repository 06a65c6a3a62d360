/**
 * The one error hierarchy. Services throw ApiError (through the ERRORS factories); the error
 * handler (src/http/error-handler.ts) is the only place that turns errors into HTTP responses.
 */
export const ERROR_CODES = {
  invalid_json: 400,
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
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

export const ERRORS = {
  invalidJson: (why = 'The request body is not valid JSON') => new ApiError('invalid_json', why),
  invalidRequest: (message: string, details?: ErrorDetail[]) => new ApiError('invalid_request', message, details),
  unauthorized: (message = 'A valid API key is required: send "Authorization: Bearer <key>"') =>
    new ApiError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer realm="pricehound"' }),
  notFound: (what = 'Resource') => new ApiError('not_found', `${what} not found`),
  routeNotFound: (method: string, url: string) => new ApiError('not_found', `No route for ${method} ${url}`),
  methodNotAllowed: (method: string, allow: string[]) =>
    new ApiError('method_not_allowed', `Method ${method} is not allowed here; allowed: ${allow.join(', ')}`, undefined, {
      Allow: allow.join(', '),
    }),
  conflict: (message: string, details?: ErrorDetail[]) => new ApiError('conflict', message, details),
  payloadTooLarge: (limit: number) =>
    new ApiError('payload_too_large', `The request body is larger than the limit of ${limit} bytes`),
  unsupportedMediaType: (type: string | undefined) =>
    new ApiError(
      'unsupported_media_type',
      type ? `Content-Type ${type} is not supported; send application/json` : 'A request body needs Content-Type: application/json',
    ),
  validation: (details: ErrorDetail[], message = 'The request has invalid fields') =>
    new ApiError('validation_failed', message, details),
  /** A query string that parses but asks for something invalid: the same 422 as a query the schema refuses. */
  invalidQuery: (details: ErrorDetail[]) => new ApiError('validation_failed', 'The query has invalid parameters', details),
  unavailable: (message = 'The service is temporarily unavailable; retry shortly') => new ApiError('unavailable', message),
} as const;
