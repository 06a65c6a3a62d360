import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ERRORS } from '../../http/errors.js';
import { ErrorBodySchema } from '../../http/schemas.js';

const Browser = Type.Object(
  {
    available: Type.Boolean({
      description: 'Listings with `render_js` can be checked: a Chromium was found and its last start worked',
    }),
    reason: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          'Why not (no Chromium found, or how its start failed); `render_js` checks fail with `browser_unavailable`',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The optional browser for JavaScript-rendered pages (docs/BROWSER.md); its absence does not make the service unready',
  },
);

const Readiness = Type.Object(
  { status: Type.String({ enum: ['ok'] }), database: Type.String({ enum: ['pglite', 'postgres'] }), browser: Browser },
  { additionalProperties: false },
);

/** Readiness, without auth, for load balancers and orchestrators. */
export function getReadinessRoute(app: FastifyInstance) {
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the database answers',
        description:
          'Answers 200 when a query against the database succeeds, 503 otherwise, and says whether the optional browser ' +
          'for `render_js` listings is available (without starting it). No API key needed.',
        tags: ['Operations'],
        security: [],
        response: {
          200: { ...Readiness, description: 'Ready to serve' },
          503: { ...ErrorBodySchema, description: 'The database is unreachable' },
        },
      },
    },
    async () => {
      try {
        await app.ctx.db.ping();
      } catch {
        throw ERRORS.unavailable('The database is unreachable');
      }
      // Looks at the file system only (docs/BROWSER.md); a browser is optional, so this never fails readiness.
      const b = (await app.ctx.fetcher.browserAvailable?.()) ?? {
        available: false,
        reason: 'this process renders no pages',
      };
      return {
        status: 'ok',
        database: app.ctx.db.kind,
        browser: b.available
          ? { available: true }
          : { available: false, reason: (b.reason ?? 'unknown').slice(0, 2000) },
      };
    },
  );
}
