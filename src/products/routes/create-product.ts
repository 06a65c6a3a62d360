import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { ProductCreateSchema, ProductSchema } from '../schemas.js';
import { createProduct } from '../service.js';
import { toProduct } from '../sql.js';

export const createProductRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/products',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createProduct',
        summary: 'Create a product',
        description:
          '`name`, `base_price` and `currency` are required. A SKU must be unique within the account (409). ' +
          'Send an `Idempotency-Key` to make retries safe.',
        tags: ['Products'],
        body: ProductCreateSchema,
        response: {
          201: withHeaders(ProductSchema, 'The created product', locationHeader),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createProduct(app.ctx.db, request.principal.accountId, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/products/${row.id}`).send(toProduct(row));
    },
  );
};
