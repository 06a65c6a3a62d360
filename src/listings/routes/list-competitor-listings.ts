import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CompetitorIdParams } from '../../competitors/schemas.js';
import { accountOwns } from '../../db/ownership.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { nestedPage } from '../../pagination/page.js';
import { listingPage } from '../pagination.js';
import { CompetitorListingsQuerySchema, ListingListSchema } from '../schemas.js';

export const listCompetitorListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors/:id/listings',
    {
      schema: {
        operationId: 'listCompetitorListings',
        summary: "List a competitor's listings",
        description: 'Every page monitored at this competitor, with the filters of `GET /listings`.',
        tags: ['Listings'],
        params: CompetitorIdParams,
        querystring: CompetitorListingsQuerySchema,
        response: {
          200: withHeaders(ListingListSchema, "A page of the competitor's listings"),
          ...errorResponses(404, 422),
        },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const page = await listingPage(app.ctx.db, accountId, request.query, { competitor_id: request.params.id });
      return nestedPage(page, () => accountOwns(app.ctx.db, accountId, 'competitors', request.params.id), 'Competitor');
    },
  );
};
