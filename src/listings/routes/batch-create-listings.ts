import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { batchAnswer, batchRoute } from '../../batches/batch.js';
import { addressPolicy } from '../../fetcher/address-guard.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ListingBatchResultSchema, ListingBatchSchema } from '../schemas.js';
import { createListingsBatch } from '../service.js';
import { toListing } from '../sql.js';

export const batchCreateListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings/batch',
    {
      ...batchRoute('listings', app.ctx.config.batchBodyLimit),
      schema: {
        operationId: 'batchCreateListings',
        summary: "Create up to 1000 competitors' listings",
        description:
          "Each item names a product (`product_id` or `product_sku`), a competitor's page (`url`) and optionally the competitor " +
          "(`competitor_id`); without it the competitor is the account's competitor of the URL's domain (or of its nearest parent " +
          'domain), created and named after the domain when there is none. Each item is created on its own and reported in `data` ' +
          'with its index and status: 201, 404 for a product or competitor that is not in this account, 409 for a URL the product ' +
          'already has a listing for (or the same product and URL earlier in the batch), 422 for invalid fields or a URL on a ' +
          'private, loopback or link-local address. With `atomic: true` either every item is created or none is, and the failures ' +
          'come back as one 422 (or 409) error. The new listings are due at once. Send an `Idempotency-Key` to make retries safe.',
        tags: ['Listings'],
        body: ListingBatchSchema,
        response: {
          200: withHeaders(ListingBatchResultSchema.documented, 'Per-item results'),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { listings, atomic } = request.body as { listings: unknown[]; atomic?: boolean };
      const results = await createListingsBatch(
        app.ctx.db,
        request.principal.accountId,
        listings,
        atomic ?? false,
        addressPolicy(app.ctx.config),
      );
      const answer = batchAnswer(results, 'listing', toListing);
      // Set once the answer exists: an error thrown before must keep the error serialiser.
      reply.serializer(reply.compileSerializationSchema(ListingBatchResultSchema.shape, '200')); // the loose shape (batches/schemas.ts)
      return answer;
    },
  );
};
