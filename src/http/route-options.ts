import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteOptions = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** routeOf's memo of `routeOptions` (undefined until first read). */
    routeMemo: RouteOptions | undefined;
  }
}

/**
 * The route options of a request (its config, URL pattern, log level), read once per request.
 * Fastify's `request.routeOptions` is a getter that builds a new twelve-field object on every
 * read, and an authenticated GET read it six times in its hooks (auth, ETag, metrics, the log
 * line: docs/BENCHMARKS.md, issue 26).
 *
 * A request changes route only when it is handed to the not-found handler (`reply.callNotFound`,
 * the static files and the `OPTIONS *` route); that handler forgets the memo
 * (src/http/not-found.ts), so what is read afterwards is the 404 route's, as Fastify's getter
 * would answer.
 */
export function routeOf(request: FastifyRequest): RouteOptions {
  return (request.routeMemo ??= request.routeOptions);
}

/** Declares the memo on every request (one shape for all of them). */
export function registerRouteMemo(app: FastifyInstance) {
  app.decorateRequest('routeMemo', undefined);
}
