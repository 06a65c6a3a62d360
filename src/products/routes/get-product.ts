import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ProductIdParams, ProductSchema } from '../schemas.js';
import { getProduct, toProduct } from '../sql.js';

export const getProductRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id',
    {
      schema: {
        operationId: 'getProduct',
        summary: 'Get a product',
        description:
          "A product of the calling account; another account's product is a 404. Send the `ETag` back in `If-None-Match` to get a 304 while it is unchanged.",
        tags: ['Products'],
        params: ProductIdParams,
        response: {
          200: withHeaders(ProductSchema, 'The product'),
          ...errorResponses(404),
        },
      },
    },
    async (request) => {
      const row = await getProduct(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Product');
      return toProduct(row);
    },
  );
};
