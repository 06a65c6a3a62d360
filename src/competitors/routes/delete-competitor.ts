import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { CompetitorIdParams } from '../schemas.js';
import { removeCompetitor } from '../service.js';

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
      await removeCompetitor(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
