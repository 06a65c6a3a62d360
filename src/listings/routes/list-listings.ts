import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { listingPage } from '../pagination.js';
import { ListingListQuerySchema, ListingListSchema } from '../schemas.js';

export const listListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/listings',
    {
      schema: {
        operationId: 'listListings',
        summary: 'List listings',
        description:
          'Listings of the account, newest first by default, filtered by product, competitor, our own pages ' +
          '(`own=true`), status, enabled or a held reading waiting (`held=true`), with cursor pagination. A product or competitor id that is not in the ' +
          'account simply matches nothing.',
        tags: ['Listings'],
        querystring: ListingListQuerySchema,
        response: { 200: withHeaders(ListingListSchema, 'A page of listings'), ...errorResponses(422) },
      },
    },
    async (request) => listingPage(app.ctx.db, request.principal.accountId, request.query),
  );
};
