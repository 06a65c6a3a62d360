import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkListFilters, ProductListQuerySchema, ProductListSchema } from '../schemas.js';
import { listProducts, SORT_SQL, toProduct } from '../sql.js';

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
      const sort = q.sort ?? '-created_at';
      const descending = sort.startsWith('-');
      const sortField = descending ? sort.slice(1) : sort;
      checkListFilters(q);
      const limit = q.limit ?? 20;
      const after = q.cursor ? decodeCursor(q.cursor, sort, SORT_SQL[sortField]!.accepts) : undefined;
      const rows = await listProducts(app.ctx.db, request.principal.accountId, {
        filter: { ...q, currency: q.currency?.toUpperCase() },
        sortField,
        descending,
        after,
        limit: limit + 1,
      });
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page.map(toProduct),
        pagination: {
          limit,
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ sort, value: SORT_SQL[sortField]!.value(last), id: last.id }) : null,
        },
      };
    },
  );
};
