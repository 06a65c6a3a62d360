import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { looseParams, PAIR_URL } from '../pair-params.js';
import { ExchangeRatePutSchema, ExchangeRateSchema, PairParams } from '../schemas.js';
import { currencyPair, rateText } from '../service.js';
import { putExchangeRate, toExchangeRate } from '../sql.js';

export const putExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    PAIR_URL,
    {
      validatorCompiler: looseParams,
      schema: {
        operationId: 'putExchangeRate',
        summary: 'Set an exchange rate',
        description:
          'Sets 1 `base` = `rate` `quote` for the account (codes in any case, stored upper case): 201 when the pair is new, ' +
          '200 when it replaces a rate. Conversions from `quote` to `base` use its inverse unless that pair is set too.',
        tags: ['Prices'],
        params: PairParams,
        body: ExchangeRatePutSchema,
        response: {
          200: withHeaders(ExchangeRateSchema, 'The rate, replaced'),
          201: withHeaders(ExchangeRateSchema, 'The rate, set for the first time', locationHeader),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const { base, quote } = currencyPair(request.params);
      const rate = rateText(request.body.rate);
      const row = await putExchangeRate(app.ctx.db, request.principal.accountId, base, quote, rate);
      if (row.created) {
        const prefix = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
        reply.code(201).header('Location', `${prefix}/exchange-rates/${base}/${quote}`);
      }
      return toExchangeRate(row);
    },
  );
};
