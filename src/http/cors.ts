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

const EXPOSED = EXPOSED_HEADERS.join(', ');
const METHODS = ALLOWED_METHODS.join(', ');
const ALLOWED = ALLOWED_HEADERS.join(', ');
const MAX_AGE = String(PREFLIGHT_MAX_AGE_SECONDS);

/**
 * CORS as an onRequest hook on the root, so it runs before the API's auth hook (which is
 * registered inside the /api/v1 and /v1 plugins): preflights, which browsers send without the
 * Authorization header, are answered 204 before authentication, and every other response gets
 * `Access-Control-Allow-Origin` whatever its status. Register it after the hook that sets
 * X-Request-Id so preflights carry one too.
 *
 * Every OPTIONS request is answered as a preflight, on any path, as GitHub's API does (an OPTIONS
 * without `Origin` or `Access-Control-Request-Method` too: every error of this API is JSON, and a
 * strict preflight check would answer it with a text/plain 400). The `OPTIONS *` route, hidden
 * from the document, only makes every path routable for OPTIONS, so the hook sees it; OPTIONS is
 * therefore never routed to the 404/405 handler (src/http/not-found.ts).
 *
 * The headers are what @fastify/cors sent with this configuration (`origin: '*'`, no
 * credentials, these exposed and allowed headers and methods, max age), written as a hook of our
 * own: every value is one string made once, where the plugin copied its options object and
 * joined the exposed-header list on every request (docs/BENCHMARKS.md, issue 26).
 */
export function registerCors(app: FastifyInstance) {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('access-control-allow-origin', ALLOW_ORIGIN).header('access-control-expose-headers', EXPOSED);
    if (request.method !== 'OPTIONS') return done();
    reply
      .header('access-control-allow-methods', METHODS)
      .header('access-control-allow-headers', ALLOWED)
      .header('access-control-max-age', MAX_AGE)
      .code(204)
      // Safari waits for a body on a 204 without it.
      .header('content-length', '0')
      .send();
  });
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
}

/**
 * For the few answers that skip the hooks (errors Fastify raises before routing, such as a
 * malformed URL): the same headers the hook sets on every other response.
 */
export function addCorsHeaders(reply: FastifyReply) {
  if (!reply.hasHeader('Access-Control-Allow-Origin')) {
    reply.header('Access-Control-Allow-Origin', ALLOW_ORIGIN).header('Access-Control-Expose-Headers', EXPOSED);
  }
}
