import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { ProductIdParams } from '../schemas.js';
import { removeProduct } from '../service.js';

export const deleteProductRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/products/:id',
    {
      schema: {
        operationId: 'deleteProduct',
        summary: 'Delete a product',
        description: 'Removes the product from monitoring, with everything that belongs to it.',
        tags: ['Products'],
        params: ProductIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await removeProduct(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
