import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ListingIdParams, ListingSchema } from '../schemas.js';
import { getListing, toListing } from '../sql.js';

export const getListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/listings/:id',
    {
      schema: {
        operationId: 'getListing',
        summary: 'Get a listing',
        description:
          'Its settings and its state: last check, last price and currency, stock, last error, failures in a row, next check.',
        tags: ['Listings'],
        params: ListingIdParams,
        response: { 200: withHeaders(ListingSchema, 'The listing'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await getListing(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Listing');
      return toListing(row);
    },
  );
};
