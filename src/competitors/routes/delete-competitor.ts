import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { CompetitorIdParams } from '../schemas.js';
import { deleteCompetitor } from '../sql.js';

export const deleteCompetitorRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/competitors/:id',
    {
      schema: {
        operationId: 'deleteCompetitor',
        summary: 'Delete a competitor',
        description: 'Removes the competitor with its listings, their check log and every price observed at it.',
        tags: ['Competitors'],
        params: CompetitorIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      if (!(await deleteCompetitor(app.ctx.db, request.principal.accountId, request.params.id))) throw ERRORS.notFound('Competitor');
      return reply.code(204).send();
    },
  );
};
