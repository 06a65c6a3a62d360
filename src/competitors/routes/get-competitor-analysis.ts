import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { CompetitorAnalysisSchema, CompetitorIdParams } from '../schemas.js';
import { analyseCompetitor } from '../sql.js';

export const getCompetitorAnalysisRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/competitors/:id/analysis',
    {
      schema: {
        operationId: 'getCompetitorAnalysis',
        summary: "Compare a competitor's prices with ours",
        description:
          "How many of our products the competitor lists and, from each listing's latest price, how often it is " +
          "cheaper than our `base_price` and by how much on average. Only prices in the product's own currency " +
          'are compared (never converted); amounts are reported per currency, shares and percentages also overall. ' +
          'Offers last seen out of stock and listings without a price yet are counted in `not_compared`.',
        tags: ['Competitors'],
        params: CompetitorIdParams,
        response: { 200: withHeaders(CompetitorAnalysisSchema, 'The analysis'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const analysis = await analyseCompetitor(app.ctx.db, request.principal.accountId, request.params.id);
      if (!analysis) throw ERRORS.notFound('Competitor');
      return analysis;
    },
  );
};
