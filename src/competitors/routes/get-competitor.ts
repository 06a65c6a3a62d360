import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { CompetitorIdParams, CompetitorSchema } from '../schemas.js';
import { getCompetitor, toCompetitor } from '../sql.js';

export const getCompetitorRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors/:id',
    {
      schema: {
        operationId: 'getCompetitor',
        summary: 'Get a competitor',
        description:
          "A competitor of the calling account with its listing count; another account's competitor is a 404.",
        tags: ['Competitors'],
        params: CompetitorIdParams,
        response: { 200: withHeaders(CompetitorSchema, 'The competitor'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await getCompetitor(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Competitor');
      return toCompetitor(row);
    },
  );
};
