import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { ListingIdParams } from '../schemas.js';
import { removeListing } from '../service.js';

export const deleteListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/listings/:id',
    {
      schema: {
        operationId: 'deleteListing',
        summary: 'Stop monitoring a page',
        description: "Removes the listing and its check log. Prices it observed stay in the product's price history.",
        tags: ['Listings'],
        params: ListingIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await removeListing(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
