import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOwns } from '../../../db/ownership.js';
import { ERRORS } from '../../../http/errors.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { checkRange } from '../../../pagination/filters.js';
import { pageOf, pageRequest } from '../../../pagination/page.js';
import { PriceChangeListSchema, PriceChangeQuerySchema } from '../schemas.js';
import { CHANGE_SORTS, listPriceChanges, toPriceChange } from '../sql.js';

export const listPriceChangesRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/price-changes',
    {
      schema: {
        operationId: 'listPriceChanges',
        summary: 'List price changes',
        description:
          'Every time a series (a product at one competitor, or our own price) got a new latest observation that differs ' +
          'from the one before in price, currency or stock, newest first, whatever recorded it (a check or POST /prices). ' +
          'Filter by product, by competitor (`own` for our own prices), by whose prices (`series`: `own` or `competitors`) and by when the new price was observed. A product ' +
          'or competitor that is not in the account is a 404.',
        tags: ['Prices'],
        querystring: PriceChangeQuerySchema,
        response: { 200: withHeaders(PriceChangeListSchema, 'A page of price changes'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const { db } = app.ctx;
      const q = request.query;
      checkRange(q, 'since', 'until');
      const competitorId = q.competitor_id === 'own' ? null : q.competitor_id;
      const page = pageRequest(q, CHANGE_SORTS, '-id');
      const rows = await listPriceChanges(db, accountId, { ...q, competitor_id: competitorId }, page);
      // An empty page may mean a filter names something not in the account: only then is it worth asking.
      if (rows.length === 0) {
        if (q.product_id && !(await accountOwns(db, accountId, 'products', q.product_id)))
          throw ERRORS.notFound('Product');
        if (competitorId && !(await accountOwns(db, accountId, 'competitors', competitorId)))
          throw ERRORS.notFound('Competitor');
      }
      return pageOf(rows, page, toPriceChange);
    },
  );
};
