import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { addressPolicy } from '../../fetcher/address-guard.js';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { ListingCreateSchema, ListingSchema } from '../schemas.js';
import { createListing } from '../service.js';
import { toListing } from '../sql.js';

export const createListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createListing',
        summary: "Start monitoring a product's page",
        description:
          'A page showing one of our products at a competitor (`competitor_id` and `url`), or on our own shop ' +
          "(no `competitor_id`; `url` defaults to the product's). The first check is due at once, then every " +
          '`check_interval_seconds`. A product or competitor that is not in this account is a 422 naming the field, ' +
          'and so is a URL on a private, loopback, link-local or metadata address (as in POST /listings/batch); ' +
          "a URL the product already has a listing for is a 409. A URL outside the competitor's domain is accepted " +
          'with a `domain_mismatch` warning. Send an `Idempotency-Key` to make retries safe.',
        tags: ['Listings'],
        body: ListingCreateSchema,
        response: {
          201: withHeaders(ListingSchema, 'The created listing', locationHeader),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createListing(
        app.ctx.db,
        request.principal.accountId,
        request.body,
        addressPolicy(app.ctx.config),
      );
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/listings/${row.id}`).send(toListing(row));
    },
  );
};
