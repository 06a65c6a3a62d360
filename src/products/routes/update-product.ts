import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ProductIdParams, ProductSchema, ProductUpdateSchema } from '../schemas.js';
import { changeProduct } from '../service.js';
import { toProduct } from '../sql.js';

/** PUT and PATCH behave the same: only the supplied fields change (docs/API-DECISIONS.md). */
export const updateProductRoute: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/products/:id',
      schema: {
        operationId: method === 'PUT' ? 'updateProduct' : 'patchProduct',
        summary: method === 'PUT' ? 'Update a product (only the fields sent)' : 'Update a product (same as PUT)',
        description: 'Fields not in the body keep their values; `null` clears an optional field.',
        tags: ['Products'],
        params: ProductIdParams,
        body: ProductUpdateSchema,
        response: {
          200: withHeaders(ProductSchema, 'The updated product'),
          ...errorResponses(404, 409, 413, 415, 422),
        },
      },
      handler: async (request) =>
        toProduct(await changeProduct(app.ctx.db, request.principal.accountId, request.params.id, request.body)),
    });
  }
};
