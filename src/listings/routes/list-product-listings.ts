import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ProductIdParams } from '../../products/schemas.js';
import { listingPage } from '../pagination.js';
import { ListingListSchema, ProductListingsQuerySchema } from '../schemas.js';
import { ownsResource } from '../sql.js';

export const listProductListingsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id/listings',
    {
      schema: {
        operationId: 'listProductListings',
        summary: 'List a product\'s listings',
        description: 'Every page where the product is monitored, at competitors and on our own shop, with the filters of `GET /listings`.',
        tags: ['Listings'],
        params: ProductIdParams,
        querystring: ProductListingsQuerySchema,
        response: { 200: withHeaders(ListingListSchema, 'A page of the product\'s listings'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const page = await listingPage(app.ctx.db, accountId, request.query, { product_id: request.params.id });
      // An empty page may mean no such product: only then is it worth a second query.
      if (page.data.length === 0 && !(await ownsResource(app.ctx.db, accountId, 'products', request.params.id))) {
        throw ERRORS.notFound('Product');
      }
      return page;
    },
  );
};
