import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { looseParams, PAIR_URL } from '../pair-params.js';
import { PairParams } from '../schemas.js';
import { currencyPair } from '../service.js';
import { deleteExchangeRate } from '../sql.js';

export const deleteExchangeRateRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    PAIR_URL,
    {
      validatorCompiler: looseParams,
      schema: {
        operationId: 'deleteExchangeRate',
        summary: 'Delete an exchange rate',
        description:
          'Removes the rate of this pair; prices in these currencies are no longer compared (unless the opposite pair is set).',
        tags: ['Prices'],
        params: PairParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const { base, quote } = currencyPair(request.params);
      if (!(await deleteExchangeRate(app.ctx.db, request.principal.accountId, base, quote)))
        throw ERRORS.notFound('Exchange rate');
      return reply.code(204).send();
    },
  );
};
