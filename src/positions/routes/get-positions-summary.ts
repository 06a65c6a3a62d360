import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { PositionSummaryQuerySchema, PositionSummarySchema } from '../schemas.js';
import { positionsSummary } from '../service.js';

export const getPositionsSummaryRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/positions/summary',
    {
      schema: {
        operationId: 'getPositionsSummary',
        summary: 'Count products by where they stand',
        description:
          'How many products are the cheapest, in between, the dearest, alone (nothing to compare) and undercut, and ' +
          'how the ranked ones spread over price-index buckets (docs/POSITIONS.md), optionally for one brand or category. ' +
          'Counted over the same stored positions as `GET /positions`, in one statement.',
        tags: ['Prices'],
        querystring: PositionSummaryQuerySchema,
        response: { 200: withHeaders(PositionSummarySchema, 'The counts'), ...errorResponses(422) },
      },
    },
    async (request) =>
      positionsSummary(
        app.ctx.reads.forAccount(request.principal.accountId),
        request.principal.accountId,
        request.query,
      ),
  );
};
