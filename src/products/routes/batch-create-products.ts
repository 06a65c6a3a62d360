import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { batchAnswer, batchRoute } from '../../batches/batch.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ProductBatchResultSchema, ProductBatchSchema } from '../schemas.js';
import { createProductsBatch } from '../service.js';
import { toProduct } from '../sql.js';

export const batchCreateProductsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/products/batch',
    {
      ...batchRoute('products', app.ctx.config.batchBodyLimit),
      schema: {
        operationId: 'batchCreateProducts',
        summary: 'Create up to 1000 products',
        description:
          'Each item is validated and created on its own and reported in `data` with its index and status ' +
          '(201, 409 for a taken or repeated SKU, 422 for invalid fields). With `atomic: true` either every item ' +
          'is created or none is, and the failures come back as one 422 (or 409) error.',
        tags: ['Products'],
        body: ProductBatchSchema,
        response: {
          200: withHeaders(ProductBatchResultSchema.documented, 'Per-item results'),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { products, atomic } = request.body as { products: unknown[]; atomic?: boolean };
      const answer = batchAnswer(
        await createProductsBatch(app.ctx.db, request.principal.accountId, products, atomic ?? false),
        'product',
        toProduct,
      );
      // Set once the answer exists: an error thrown before must keep the error serialiser.
      reply.serializer(reply.compileSerializationSchema(ProductBatchResultSchema.shape, '200')); // the loose shape (batches/schemas.ts)
      return answer;
    },
  );
};
