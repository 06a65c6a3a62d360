import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { PositionListQuerySchema, PositionListSchema } from '../schemas.js';
import { positionsPage } from '../service.js';

export const listPositionsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/positions',
    {
      schema: {
        operationId: 'listPositions',
        summary: 'List where each product stands',
        description:
          'One row per product with at least one compared competitor price and our price known: its rank, price index, ' +
          'the cheapest competitor and the gap to it, the same numbers as `monitoring.position` of `GET /products/{id}`. ' +
          'Most undercut first by default (`-gap_percent`); filters on undercut, rank, gap, a competitor that undercuts, ' +
          'brand, category and text. Read from positions kept up to date as prices arrive (docs/POSITIONS.md).',
        tags: ['Prices'],
        querystring: PositionListQuerySchema,
        response: { 200: withHeaders(PositionListSchema, 'A page of positions'), ...errorResponses(422) },
      },
    },
    async (request) => positionsPage(app.ctx.db, request.principal.accountId, request.query),
  );
};
