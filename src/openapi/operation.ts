import type { FastifySchema, RouteOptions } from 'fastify';
import { requiredScope } from '../auth/service.js';
import {
  errorResponse,
  everyResponseHeaders,
  rateLimitHeaders,
  retryAfterHeader,
  wwwAuthenticateHeader,
} from '../http/schemas.js';
import { etagHeader, idempotencyKeyParam, idempotentReplayedHeader, ifNoneMatchParam } from './headers.js';

type Json = Record<string, unknown>;

interface ResponseDoc extends Json {
  description?: string;
  headers?: Record<string, object>;
}

interface RouteDoc extends Json {
  security?: unknown[];
  produces?: string[];
  response?: Record<string, ResponseDoc>;
  headers?: { properties?: Record<string, object> };
  tags?: string[];
  description?: string;
}

export const ALIAS_TAG = '/v1 aliases';

/** Marks an operation whose body may be left out (`config.optionalBody`, src/http/optional-body.ts) until finishDocument. */
export const OPTIONAL_BODY = 'x-optional-body';

/** `security: []` marks the routes that need no API key (health, metrics, this document). */
export function isPublic(schema: unknown): boolean {
  const security = (schema as RouteDoc | undefined)?.security;
  return Array.isArray(security) && security.length === 0;
}

/** A response schema in @fastify/swagger's explicit `content` form, so it stays JSON whatever the route produces. */
function asJson(response: ResponseDoc): ResponseDoc {
  const { description, headers, examples, ...schema } = response;
  const example = Array.isArray(examples) ? examples[0] : undefined;
  return {
    description,
    headers,
    content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } },
  };
}

/** Statuses a stored idempotent response can have: what the handler answered (src/http/idempotency.ts). */
const replayable = (status: string) =>
  status.startsWith('2') || status === '404' || status === '409' || status === '422';

/**
 * @fastify/swagger `transform`: adds to one route's schema what the app-wide hooks do to every
 * route of its kind, so that no route has to repeat it and none can forget it:
 * - every response: `X-Request-Id` (src/app.ts) and `Access-Control-Allow-Origin` (src/http/cors.ts);
 *   500 with the Error body (src/http/error-handler.ts);
 * - GET: `If-None-Match`, `ETag` on 200 and the 304 answer (src/http/etag.ts), but not where
 *   `config.streamed`;
 * - `config.idempotent` POSTs: `Idempotency-Key`, `Idempotent-Replayed` and the 409 of a reused key,
 *   and where the answer is about a resource (the path names one, or a `Location` does), the 404
 *   of a replay once it is deleted (src/http/idempotency.ts);
 * - authenticated operations that need a `full` key: the 403 `insufficient_scope` a read key gets
 *   (src/auth/scopes.ts, src/auth/hook.ts). Not as roles of the security requirement
 *   (`bearerAuth: ["full"]`), which OpenAPI 3.1 allows for http schemes but linters and client
 *   generators read as OAuth scopes that are not declared;
 * - `config.optionalBody` POSTs: a request body that is not required;
 * - `/v1` aliases: their own tag and a pointer to the canonical operation.
 * The route's own schema object is not touched: validation and serialisation never see this.
 */
export function documentRoute({ schema, url, route }: { schema: unknown; url: string; route: RouteOptions }) {
  const doc: RouteDoc = { ...((schema ?? {}) as RouteDoc) };
  const methods = ([] as string[]).concat(route.method);
  const common = isPublic(doc) ? { ...everyResponseHeaders } : { ...rateLimitHeaders, ...everyResponseHeaders };

  const responses: Record<string, ResponseDoc> = {};
  for (const [status, response] of Object.entries(doc.response ?? {})) {
    responses[status] = { ...response, headers: { ...everyResponseHeaders, ...response.headers } };
  }
  responses['500'] ??= errorResponse(500, common);

  const requestHeaders: Record<string, object> = {};
  if (methods.includes('GET') && !route.config?.streamed) {
    Object.assign(requestHeaders, ifNoneMatchParam);
    const ok = responses['200'];
    if (ok) ok.headers = { ...ok.headers, ...etagHeader };
    responses['304'] = {
      type: 'null',
      description: 'Not modified: an `If-None-Match` tag matched the current `ETag`. No body.',
      headers: { ...common, ...etagHeader },
    };
  }
  if (route.config?.idempotent) {
    Object.assign(requestHeaders, idempotencyKeyParam);
    // A key reused with another request, or while its first request runs (then with Retry-After), is a 409 on any such route.
    responses['409'] ??= errorResponse(
      409,
      common,
      'The Idempotency-Key was used for another request, or its first request is still running (with `Retry-After`)',
    );
    responses['409'].headers = { ...retryAfterHeader, ...responses['409'].headers };
    const namesResource =
      url.includes(':') ||
      Object.entries(responses).some(([status, r]) => status.startsWith('2') && r.headers?.Location !== undefined);
    if (namesResource)
      responses['404'] ??= errorResponse(
        404,
        common,
        'A replay (`Idempotency-Key`) of an answer about a resource deleted since',
      );
    for (const [status, response] of Object.entries(responses)) {
      if (replayable(status)) response.headers = { ...response.headers, ...idempotentReplayedHeader };
    }
  }
  if (!isPublic(doc) && /^\/(api\/)?v1\//.test(url) && requiredScope(methods[0]!, route.config) === 'full') {
    responses['403'] ??= errorResponse(403, { ...wwwAuthenticateHeader, ...rateLimitHeaders, ...everyResponseHeaders });
  }
  // @fastify/swagger marks every body required; finishDocument (./components.ts) reads this mark.
  if (route.config?.optionalBody) doc[OPTIONAL_BODY] = true;
  if (Object.keys(requestHeaders).length > 0) {
    doc.headers = {
      type: 'object',
      properties: { ...doc.headers?.properties, ...requestHeaders },
    } as RouteDoc['headers'];
  }
  // Errors are JSON even where the success is not (`produces`, e.g. /metrics' text).
  if (Array.isArray(doc.produces) && !doc.produces.includes('application/json')) {
    for (const [status, response] of Object.entries(responses))
      if (Number(status) >= 400) responses[status] = asJson(response);
  }
  doc.response = responses;

  if (url.startsWith('/v1/')) {
    const canonical = `${methods.join(', ')} /api${url.replace(/:(\w+)/g, '{$1}')}`;
    doc.tags = [ALIAS_TAG];
    doc.description =
      `The same operation as \`${canonical}\`, under the \`/v1\` form of the paths.` +
      (doc.description ? `\n\n${doc.description}` : '');
  }
  return { schema: doc as FastifySchema, url };
}
