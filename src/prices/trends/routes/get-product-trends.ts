import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../../http/errors.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { ProductIdParams } from '../../../products/schemas.js';
import { TrendsQuerySchema, TrendsSchema } from '../schemas.js';
import { noteTrendsRead } from '../reads.js';
import { getTrends } from '../service.js';

export const getProductTrendsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id/trends',
    {
      schema: {
        operationId: 'getProductTrends',
        summary: "Get a product's price position and trends",
        description:
          "Our current price and each competitor's latest, the comparison in the product's currency (lowest, " +
          'average, highest, our rank, price index, the cheapest competitor and since when), the change of every ' +
          'series over 24 hours, 7 and 30 days, and per series Keepa-style statistics over 30, 90, 180 and 365 days. ' +
          "Prices in another currency are converted only through the account's exchange rates; without one they " +
          'are reported as they are and left out of the comparison, which counts them. Definitions: docs/prices/TRENDS.md.',
        tags: ['Prices'],
        params: ProductIdParams,
        querystring: TrendsQuerySchema,
        response: { 200: withHeaders(TrendsSchema, "The product's position and trends"), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const trends = await getTrends(
        app.ctx.reads.forAccount(request.principal.accountId),
        request.principal.accountId,
        request.params.id,
      );
      if (!trends) throw ERRORS.notFound('Product');
      noteTrendsRead(trends.product_id, app.ctx.clock.now());
      return trends;
    },
  );
};
