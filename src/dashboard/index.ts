import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS } from '../http/errors.js';
import { type DashboardFile, DASHBOARD_DIST, loadDashboard } from './files.js';
import { DASHBOARD_HEADERS } from './headers.js';

export const DASHBOARD_PREFIX = '/dashboard';

export interface DashboardOptions {
  /** The built dashboard; default dashboard/dist of this package. */
  dir?: string;
}

/** Hashed assets never change under their name; everything else is revalidated (ETag) on every load. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/** br, then gzip, when the client takes them (a `;q=0` refuses); identity otherwise. */
function pickEncoding(accept: string | undefined, file: DashboardFile): 'br' | 'gzip' | undefined {
  if (!accept) return undefined;
  const offered = new Set(
    accept
      .split(',')
      .map((part) => part.trim().toLowerCase().split(';'))
      .filter(([, ...params]) => !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p)))
      .map(([name]) => name),
  );
  if (file.br && offered.has('br')) return 'br';
  if (file.gzip && (offered.has('gzip') || offered.has('*'))) return 'gzip';
  return undefined;
}

/**
 * The dashboard (docs/DASHBOARD.md): the files `vite build` wrote to dashboard/dist, served at
 * /dashboard from memory (src/dashboard/files.ts: a lookup table, so no URL can name a file
 * outside the build). index.html answers /dashboard and /dashboard/; the app routes in the page
 * itself (`#/products/...`), so any other path is a file or a JSON 404 in the API's error shape.
 *
 * Not wrapped in fastify-plugin: its hook, which sets the security headers, applies to these
 * routes only, and the API's responses stay as they are.
 */
export async function dashboardRoutes(app: FastifyInstance, opts: DashboardOptions) {
  const files = loadDashboard(opts.dir ?? DASHBOARD_DIST);
  if (!files)
    app.log.warn(
      { dir: opts.dir ?? DASHBOARD_DIST },
      'the dashboard is not built (npm run build): /dashboard answers 404',
    );

  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(DASHBOARD_HEADERS);
    done();
  });

  const send = (request: FastifyRequest, reply: FastifyReply, rel: string) => {
    const file = files?.get(rel);
    if (!file) {
      if (!files) throw ERRORS.notFound('Dashboard (not built: run `npm run build`)');
      throw ERRORS.notFound('Dashboard file');
    }
    const encoding = pickEncoding(request.headers['accept-encoding'], file);
    reply
      .type(file.type)
      .header('Cache-Control', file.immutable ? IMMUTABLE : REVALIDATE)
      .header('Vary', 'Accept-Encoding');
    if (encoding) reply.header('Content-Encoding', encoding);
    return reply.send(encoding === 'br' ? file.br : encoding === 'gzip' ? file.gzip : file.body);
  };

  const hidden = { schema: { hide: true }, logLevel: 'warn' as const };
  app.get(DASHBOARD_PREFIX, hidden, (request, reply) => send(request, reply, 'index.html'));
  app.get(`${DASHBOARD_PREFIX}/*`, hidden, (request, reply) => {
    const rel = (request.params as { '*': string })['*'];
    return send(request, reply, rel === '' ? 'index.html' : rel);
  });
}
