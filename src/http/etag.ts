import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { routeOf } from './route-options.js';

// The one-shot crypto.hash (Node 20.12+) costs about half of createHash().update().digest():
// ~0.5 against ~1 us for a product, and the hash was the largest cost of ours on a GET in the
// CPU profile under load (docs/BENCHMARKS.md). Same digest either way.
const sha1 =
  typeof crypto.hash === 'function'
    ? (data: string | Buffer) => crypto.hash('sha1', data, 'base64url')
    : (data: string | Buffer) => crypto.createHash('sha1').update(data).digest('base64url');

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * GET routes whose answer may be streamed (CSV exports): it goes out before its hash can
     * be known, so none of their answers carries an ETag or gets a 304, streamed or not, and the
     * document says so (src/openapi/operation.ts).
     */
    streamed?: boolean;
  }
}

/**
 * ETag on successful GET responses and 304 for a matching If-None-Match (spec part 8 rule 4:
 * "cache responses"). Written here rather than with @fastify/etag because that plugin tags and
 * 304s every method and status, and a PUT or an error must never answer 304.
 */
export function registerEtag(app: FastifyInstance) {
  // A callback hook: it never waits, so it takes no promise and no microtask per response.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (
      (request.method !== 'GET' && request.method !== 'HEAD') ||
      reply.statusCode !== 200 ||
      routeOf(request).config.streamed
    )
      return done(null, payload);
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    const etag = `W/"${sha1(payload)}"`;
    reply.header('etag', etag);
    const inm = request.headers['if-none-match'];
    if (inm && (inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag.slice(2)))) {
      reply.code(304);
      reply.removeHeader('content-length');
      return done(null, '');
    }
    done(null, payload);
  });
}
