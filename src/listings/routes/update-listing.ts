import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { addressPolicy } from '../../fetcher/address-guard.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ListingIdParams, ListingSchema, ListingUpdateSchema } from '../schemas.js';
import { changeListing } from '../service.js';
import { toListing } from '../sql.js';

const FIXED = ['product_id', 'competitor_id'] as const;

/** PUT and PATCH behave the same: only the supplied fields change (docs/API-DECISIONS.md). */
export const updateListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/listings/:id',
      schema: {
        operationId: method === 'PUT' ? 'updateListing' : 'patchListing',
        summary: method === 'PUT' ? 'Update a listing (only the fields sent)' : 'Update a listing (same as PUT)',
        description:
          'Fields not in the body keep their values; `null` clears `selector` or `currency_override`. A change to ' +
          'what a check does (`url`, `selector`, `currency_override`, `check_interval_seconds`, `respect_robots`, ' +
          '`render_js`, `visible_fallback`) or enabling a disabled listing makes it due at once. A `url` on a private, loopback, ' +
          'link-local or metadata address is a 422, as at creation. `product_id` and `competitor_id` cannot ' +
          'change: create a new listing instead.',
        tags: ['Listings'],
        params: ListingIdParams,
        body: ListingUpdateSchema,
        response: {
          200: withHeaders(ListingSchema, 'The updated listing'),
          ...errorResponses(404, 409, 413, 415, 422),
        },
      },
      // Before the schema, which would only call them unknown fields.
      preValidation: async (request) => {
        const body = request.body as Record<string, unknown> | null;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
        const fixed = FIXED.filter((f) => Object.hasOwn(body, f));
        if (fixed.length > 0) {
          throw ERRORS.validation(
            fixed.map((field) => ({ field, message: 'cannot be changed; create a new listing instead' })),
          );
        }
      },
      handler: async (request) =>
        toListing(
          await changeListing(
            app.ctx.db,
            request.principal.accountId,
            request.params.id,
            request.body,
            addressPolicy(app.ctx.config),
          ),
        ),
    });
  }
};
