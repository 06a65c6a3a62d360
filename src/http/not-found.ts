import type { FastifyInstance, HTTPMethods } from 'fastify';
import FindMyWay from 'find-my-way';
import { ERRORS } from './errors.js';

/**
 * Unknown paths answer 404, known paths with the wrong method 405 with an Allow header. Fastify
 * only knows "no route", so every route is mirrored into a router keyed by method to tell apart.
 * OPTIONS is left out: it is the CORS preflight, answered on every path by src/http/cors.ts
 * (whose `OPTIONS *` route would otherwise make every path "known" and every 404 a 405).
 */
export function registerNotFound(app: FastifyInstance) {
  const router = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const m of ([] as HTTPMethods[]).concat(route.method)) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      methods.add(m);
      try {
        router.on(m as never, route.url, () => undefined);
      } catch {
        // the same path registered twice for one method: Fastify itself will complain
      }
    }
  });
  app.setNotFoundHandler((request) => {
    // The request now has the 404 route (src/http/route-options.ts).
    request.routeMemo = undefined;
    const path = request.url.split('?')[0] ?? '/';
    const allow = [...methods].filter((m) => router.find(m as never, path) !== null);
    // A route of this method that found nothing to serve (a missing file under /docs/static/)
    // called the not-found handler itself: 404, not "wrong method".
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (allow.length > 0 && !allow.includes(method)) {
      if (allow.includes('GET')) allow.push('HEAD');
      throw ERRORS.methodNotAllowed(request.method, allow.sort());
    }
    throw ERRORS.routeNotFound(request.method, path);
  });
}
