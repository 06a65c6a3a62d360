import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { ExchangeRateListQuerySchema, ExchangeRateListSchema } from '../schemas.js';
import { listExchangeRates, RATE_SORTS, toExchangeRate } from '../sql.js';

export const listExchangeRatesRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/exchange-rates',
    {
      schema: {
        operationId: 'listExchangeRates',
        summary: 'List exchange rates',
        description: 'The rates the account set, ordered by `base` then `quote`, with cursor pagination.',
        tags: ['Prices'],
        querystring: ExchangeRateListQuerySchema,
        response: { 200: withHeaders(ExchangeRateListSchema, 'A page of exchange rates'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, RATE_SORTS, 'base,quote');
      return pageOf(
        await listExchangeRates(app.ctx.db, request.principal.accountId, request.query, page),
        page,
        toExchangeRate,
      );
    },
  );
};
