import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { CompetitorIdParams, CompetitorSchema, CompetitorUpdateSchema } from '../schemas.js';
import { changeCompetitor } from '../service.js';
import { toCompetitor } from '../sql.js';

/** PUT and PATCH behave the same: only the supplied fields change (docs/API-DECISIONS.md). */
export const updateCompetitorRoute: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/competitors/:id',
      schema: {
        operationId: method === 'PUT' ? 'updateCompetitor' : 'patchCompetitor',
        summary: method === 'PUT' ? 'Update a competitor (only the fields sent)' : 'Update a competitor (same as PUT)',
        description:
          'Fields not in the body keep their values; `null` clears an optional field. A new `website` gives a new ' +
          '`domain`. A `proxy_url` equal to the masked one responses show keeps the stored proxy and its credentials.',
        tags: ['Competitors'],
        params: CompetitorIdParams,
        body: CompetitorUpdateSchema,
        response: {
          200: withHeaders(CompetitorSchema, 'The updated competitor'),
          ...errorResponses(404, 413, 415, 422),
        },
      },
      handler: async (request) =>
        toCompetitor(await changeCompetitor(app.ctx.db, request.principal.accountId, request.params.id, request.body)),
    });
  }
};
