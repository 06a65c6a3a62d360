import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { checkListFilters, ProductListQuerySchema, ProductListSchema } from '../schemas.js';
import { listProducts, PRODUCT_SORTS, toProduct } from '../sql.js';

export const listProductsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products',
    {
      schema: {
        operationId: 'listProducts',
        summary: 'List products',
        description: 'Products of the account, newest first by default, with filters, sorting and cursor pagination.',
        tags: ['Products'],
        querystring: ProductListQuerySchema,
        response: { 200: withHeaders(ProductListSchema, 'A page of products'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      checkListFilters(q);
      const page = pageRequest(q, PRODUCT_SORTS, '-created_at');
      return pageOf(await listProducts(app.ctx.db, request.principal.accountId, q, page), page, toProduct);
    },
  );
};
