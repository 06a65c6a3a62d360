import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, locationHeader, NoContent, withHeaders } from '../../http/schemas.js';
import { validatorCompiler } from '../../http/validation.js';
import { ExchangeRatePutSchema, ExchangeRateSchema, LoosePairParams, PairParams } from '../schemas.js';
import { currencyPair, rateText } from '../service.js';
import { deleteExchangeRate, getExchangeRate, putExchangeRate, toExchangeRate } from '../sql.js';

// Documented with ISO 4217 codes, validated loosely so a bad code is a 422 naming it (currencyPair)
// rather than the 404 a path parameter's schema failure answers.
const looseParams = (req: Parameters<typeof validatorCompiler>[0]) =>
  validatorCompiler(req.httpPart === 'params' ? { ...req, schema: LoosePairParams } : req);

const URL = '/exchange-rates/:base/:quote';

export const getExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    URL,
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

export const putExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    URL,
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

export const deleteExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    URL,
    {
      validatorCompiler: looseParams,
      schema: {
        operationId: 'deleteExchangeRate',
        summary: 'Delete an exchange rate',
        description: 'Removes the rate of this pair; prices in these currencies are no longer compared (unless the opposite pair is set).',
        tags: ['Prices'],
        params: PairParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const { base, quote } = currencyPair(request.params);
      if (!(await deleteExchangeRate(app.ctx.db, request.principal.accountId, base, quote))) throw ERRORS.notFound('Exchange rate');
      return reply.code(204).send();
    },
  );
};
