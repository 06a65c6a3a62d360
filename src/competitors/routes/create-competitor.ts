import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { CompetitorCreateSchema, CompetitorSchema } from '../schemas.js';
import { createCompetitor } from '../service.js';
import { toCompetitor } from '../sql.js';

export const createCompetitorRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/competitors',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createCompetitor',
        summary: 'Create a competitor',
        description:
          '`name` and `website` are required; `domain` is derived from the website (lower case, without `www.`). ' +
          "An optional `proxy_url` sends checks of this competitor's pages through an HTTP proxy; its credentials " +
          'are never shown back. Send an `Idempotency-Key` to make retries safe.',
        tags: ['Competitors'],
        body: CompetitorCreateSchema,
        response: {
          201: withHeaders(CompetitorSchema, 'The created competitor', locationHeader),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createCompetitor(app.ctx.db, request.principal.accountId, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/competitors/${row.id}`).send(toCompetitor(row));
    },
  );
};
