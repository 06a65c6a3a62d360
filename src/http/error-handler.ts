import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailable } from '../db/types.js';
import { addCorsHeaders } from './cors.js';
import { ApiError, errorBody, ERRORS, type ErrorCode, ERROR_CODES } from './errors.js';
import { toDetails } from './validation.js';

// Codes a framework error's status may map to. `insufficient_scope` (403) is only ever the auth
// hook's: a plugin's 403 (@fastify/static refusing a path that climbs out of its root) is a bad
// request like any other 4xx without a code of its own.
const BY_STATUS: Record<number, ErrorCode> = Object.fromEntries(
  Object.entries(ERROR_CODES)
    .filter(([code]) => code !== 'insufficient_scope')
    .map(([code, status]) => [status, code as ErrorCode]),
) as Record<number, ErrorCode>;

/** Anything thrown -> ApiError. The only place where errors become HTTP. */
export function toApiError(err: FastifyError | Error, request: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { validation?: unknown[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const ctx = e.validationContext;
    const details = toDetails(e.validation as never);
    if (ctx === 'params') return ERRORS.notFound();
    return ctx === 'querystring' ? ERRORS.invalidQuery(details) : ERRORS.validation(details);
  }
  switch (e.code) {
    // A path segment too long to be any id names nothing (Fastify's own answer would be 414).
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return ERRORS.routeNotFound(request.method, (request.url.split('?')[0] ?? '/').slice(0, 200));
    case 'FST_ERR_BAD_URL':
      return ERRORS.invalidRequest('The URL is not correctly percent-encoded');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return ERRORS.unsupportedMediaType(request.headers['content-type']);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return ERRORS.payloadTooLarge(request.routeOptions.bodyLimit ?? 0);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return ERRORS.invalidJson();
  }
  if (err instanceof SyntaxError) return ERRORS.invalidJson();
  if (isUnavailable(err)) return ERRORS.unavailable();
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = BY_STATUS[status] ?? 'invalid_request';
    return new ApiError(code, e.message || 'Bad request');
  }
  return ERRORS.internal();
}

export function errorHandler(this: unknown, err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  // The client went away (an aborted upload, or one cut by REQUEST_TIMEOUT, which the client error
  // handler has answered): the body stream fails with ECONNRESET, which is not the database's
  // ECONNRESET (a 503 logged as an error). Nobody is left to answer; one line without a stack.
  if (!(err instanceof ApiError) && request.raw.socket?.destroyed) {
    request.log.info(
      { reason: (err as FastifyError).code ?? err.message },
      'request abandoned: the connection closed before the request was read',
    );
    return reply
      .code(400)
      .send(errorBody(ERRORS.invalidRequest('The connection closed before the request was read'), request.id));
  }
  const apiError = toApiError(err, request);
  if (apiError.status >= 500) {
    request.log.error({ err }, 'request failed');
  } else if (!(err instanceof ApiError)) {
    request.log.info({ code: apiError.code, reason: err.message }, 'request rejected');
  }
  if (apiError.headers) reply.headers(apiError.headers);
  // An error raised before the CORS hook ran still tells a browser script what went wrong.
  addCorsHeaders(reply);
  return reply.code(apiError.status).send(errorBody(apiError, request.id));
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a malformed or over-long
 * URL) would otherwise get Fastify's own body instead of ours. No onRequest hook runs for them,
 * so the headers those hooks put on every other response are set here.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  addCorsHeaders(reply);
  return errorHandler(err, request, reply);
}
