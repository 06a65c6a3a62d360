import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOwns } from '../../db/ownership.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { nestedPage } from '../../pagination/page.js';
import { ProductIdParams } from '../../products/schemas.js';
import { listingPage } from '../pagination.js';
import { ListingListSchema, ProductListingsQuerySchema } from '../schemas.js';

export const listProductListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id/listings',
    {
      schema: {
        operationId: 'listProductListings',
        summary: "List a product's listings",
        description:
          'Every page where the product is monitored, at competitors and on our own shop, with the filters of `GET /listings`.',
        tags: ['Listings'],
        params: ProductIdParams,
        querystring: ProductListingsQuerySchema,
        response: {
          200: withHeaders(ListingListSchema, "A page of the product's listings"),
          ...errorResponses(404, 422),
        },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const page = await listingPage(app.ctx.db, accountId, request.query, { product_id: request.params.id });
      return nestedPage(page, () => accountOwns(app.ctx.db, accountId, 'products', request.params.id), 'Product');
    },
  );
};
