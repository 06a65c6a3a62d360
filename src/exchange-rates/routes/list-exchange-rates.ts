import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { keysetPage } from '../../http/page.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ExchangeRateListQuerySchema, ExchangeRateListSchema } from '../schemas.js';
import { listExchangeRates, toExchangeRate } from '../sql.js';

/** Cursors carry this in place of a sort: rates have one order. Their value is the last pair, `EUR/USD`. */
const ORDER = 'base,quote';
const PAIR = /^[A-Z]{3}\/[A-Z]{3}$/;

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
      const q = request.query;
      const limit = q.limit ?? 20;
      const cursor = q.cursor ? decodeCursor(q.cursor, ORDER, (v) => typeof v === 'string' && PAIR.test(v)) : undefined;
      const after = cursor ? { base: String(cursor.value).slice(0, 3), quote: String(cursor.value).slice(4) } : undefined;
      const rows = await listExchangeRates(app.ctx.db, request.principal.accountId, {
        base: q.base?.toUpperCase(),
        quote: q.quote?.toUpperCase(),
        after,
        limit: limit + 1,
      });
      return keysetPage(rows, limit, toExchangeRate, (last) => encodeCursor({ sort: ORDER, value: `${last.base}/${last.quote}`, id: last.quote }));
    },
  );
};
