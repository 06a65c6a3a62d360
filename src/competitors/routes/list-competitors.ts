import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { CompetitorListQuerySchema, CompetitorListSchema } from '../schemas.js';
import { listCompetitors, SORT_SQL, toCompetitor } from '../sql.js';
import { normaliseDomain } from '../urls.js';

export const listCompetitorsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors',
    {
      schema: {
        operationId: 'listCompetitors',
        summary: 'List competitors',
        description: 'Competitors of the account, newest first by default, with filters, sorting and cursor pagination.',
        tags: ['Competitors'],
        querystring: CompetitorListQuerySchema,
        response: { 200: withHeaders(CompetitorListSchema, 'A page of competitors'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      const sort = q.sort ?? '-created_at';
      const descending = sort.startsWith('-');
      const sortField = descending ? sort.slice(1) : sort;
      if (q.created_after && q.created_before && Date.parse(q.created_after) >= Date.parse(q.created_before)) {
        throw ERRORS.validation([{ field: 'created_after', message: 'must be before created_before' }], 'The query has invalid parameters');
      }
      const domain = q.domain === undefined ? undefined : normaliseDomain(q.domain);
      if (q.domain !== undefined && domain === undefined) {
        throw ERRORS.validation([{ field: 'domain', message: 'must be a host name such as example.com' }], 'The query has invalid parameters');
      }
      const limit = q.limit ?? 20;
      const after = q.cursor ? decodeCursor(q.cursor, sort, SORT_SQL[sortField]!.accepts) : undefined;
      const rows = await listCompetitors(app.ctx.db, request.principal.accountId, {
        filter: { domain, q: q.q, created_after: q.created_after, created_before: q.created_before },
        sortField,
        descending,
        after,
        limit: limit + 1,
      });
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page.map(toCompetitor),
        pagination: {
          limit,
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ sort, value: SORT_SQL[sortField]!.value(last), id: last.id }) : null,
        },
      };
    },
  );
};
