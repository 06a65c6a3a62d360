import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CompetitorIdParams } from '../../competitors/schemas.js';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { listingPage } from '../pagination.js';
import { CompetitorListingsQuerySchema, ListingListSchema } from '../schemas.js';
import { ownsResource } from '../sql.js';

export const listCompetitorListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors/:id/listings',
    {
      schema: {
        operationId: 'listCompetitorListings',
        summary: 'List a competitor\'s listings',
        description: 'Every page monitored at this competitor, with the filters of `GET /listings`.',
        tags: ['Listings'],
        params: CompetitorIdParams,
        querystring: CompetitorListingsQuerySchema,
        response: { 200: withHeaders(ListingListSchema, 'A page of the competitor\'s listings'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const page = await listingPage(app.ctx.db, accountId, request.query, { competitor_id: request.params.id });
      if (page.data.length === 0 && !(await ownsResource(app.ctx.db, accountId, 'competitors', request.params.id))) {
        throw ERRORS.notFound('Competitor');
      }
      return page;
    },
  );
};
