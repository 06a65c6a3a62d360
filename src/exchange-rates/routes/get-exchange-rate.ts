import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { looseParams, PAIR_URL } from '../pair-params.js';
import { ExchangeRateSchema, PairParams } from '../schemas.js';
import { currencyPair } from '../service.js';
import { getExchangeRate, toExchangeRate } from '../sql.js';

export const getExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    PAIR_URL,
    {
      validatorCompiler: looseParams,
      schema: {
        operationId: 'getExchangeRate',
        summary: 'Get an exchange rate',
        description:
          'The rate the account set for this pair (1 `base` = `rate` `quote`). Only a rate set for exactly this pair; ' +
          'a 404 when there is none, even if the opposite pair has one (which conversions would use inverted).',
        tags: ['Prices'],
        params: PairParams,
        response: { 200: withHeaders(ExchangeRateSchema, 'The rate'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { base, quote } = currencyPair(request.params);
      const row = await getExchangeRate(app.ctx.db, request.principal.accountId, base, quote);
      if (!row) throw ERRORS.notFound('Exchange rate');
      return toExchangeRate(row);
    },
  );
};
