import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * CORS for every response: any origin may call the API and read its answers
 * (`Access-Control-Allow-Origin: *`, as GitHub and Stripe do). That is safe here because the API
 * authenticates with a Bearer key in a header, never with cookies: a page on another origin can
 * only act with a key it already holds, and credentials mode stays off (the browser sends no
 * cookies and `*` could not be combined with them anyway). docs/API-DECISIONS.md, "CORS".
 */
export const ALLOW_ORIGIN = '*';

/** Response headers a browser script may read besides the CORS-safelisted ones. */
export const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'ETag',
  'Location',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'Allow',
];

/** Request headers a preflight allows. */
export const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-None-Match', 'X-Request-Id'];

export const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** How long a browser may cache a preflight answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/**
 * @fastify/cors on the root, so its onRequest hook runs before the API's auth hook (which is
 * registered inside the /api/v1 and /v1 plugins): preflights, which browsers send without the
 * Authorization header, are answered 204 before authentication, and every other response gets
 * `Access-Control-Allow-Origin` whatever its status. Register it after the hook that sets
 * X-Request-Id so preflights carry one too.
 *
 * Every OPTIONS request is answered as a preflight (`strictPreflight: false`), on any path, as
 * GitHub's API does: the plugin's strict mode would answer an OPTIONS without `Origin` or
 * `Access-Control-Request-Method` with a text/plain 400, and every error of this API is JSON.
 * OPTIONS is therefore never routed to the 404/405 handler (src/http/not-found.ts).
 */
export async function registerCors(app: FastifyInstance) {
  await app.register(cors, {
    origin: ALLOW_ORIGIN,
    credentials: false,
    methods: ALLOWED_METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    preflight: true,
    strictPreflight: false,
    hideOptionsRoute: true,
  });
}

const EXPOSED = EXPOSED_HEADERS.join(', ');

/**
 * For the few answers that skip the hooks (errors Fastify raises before routing, such as a
 * malformed URL): the same headers the plugin sets on every other response.
 */
export function addCorsHeaders(reply: FastifyReply) {
  if (!reply.hasHeader('Access-Control-Allow-Origin')) {
    reply.header('Access-Control-Allow-Origin', ALLOW_ORIGIN).header('Access-Control-Expose-Headers', EXPOSED);
  }
}
