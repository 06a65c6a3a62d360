import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkRange } from '../../pagination/filters.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { CompetitorListQuerySchema, CompetitorListSchema } from '../schemas.js';
import { COMPETITOR_SORTS, listCompetitors, toCompetitor } from '../sql.js';
import { normaliseDomain } from '../urls.js';

export const listCompetitorsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors',
    {
      schema: {
        operationId: 'listCompetitors',
        summary: 'List competitors',
        description:
          'Competitors of the account, newest first by default, with filters, sorting and cursor pagination.',
        tags: ['Competitors'],
        querystring: CompetitorListQuerySchema,
        response: { 200: withHeaders(CompetitorListSchema, 'A page of competitors'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      checkRange(q, 'created_after', 'created_before');
      const domain = q.domain === undefined ? undefined : normaliseDomain(q.domain);
      if (q.domain !== undefined && domain === undefined) {
        throw ERRORS.invalidQuery([{ field: 'domain', message: 'must be a host name such as example.com' }]);
      }
      const page = pageRequest(q, COMPETITOR_SORTS, '-created_at');
      return pageOf(
        await listCompetitors(app.ctx.db, request.principal.accountId, { ...q, domain }, page),
        page,
        toCompetitor,
      );
    },
  );
};
