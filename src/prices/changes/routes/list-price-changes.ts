import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { decodeCursor, encodeCursor } from '../../../http/cursor.js';
import { ERRORS } from '../../../http/errors.js';
import { keysetPage } from '../../../http/page.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { ownsResource } from '../../../listings/sql.js';
import { PriceChangeListSchema, PriceChangeQuerySchema } from '../schemas.js';
import { changeId, listPriceChanges, toPriceChange } from '../sql.js';

/** Cursors carry this in place of a sort: changes have one order, newest id first. Their value is the last id's digits. */
const ORDER = '-id';
const ID_TEXT = /^[1-9][0-9]{0,17}$/;

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
          'Filter by product, by competitor (`own` for our own prices) and by when the new price was observed. A product ' +
          'or competitor that is not in the account is a 404.',
        tags: ['Prices'],
        querystring: PriceChangeQuerySchema,
        response: { 200: withHeaders(PriceChangeListSchema, 'A page of price changes'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const q = request.query;
      if (q.since && q.until && Date.parse(q.since) >= Date.parse(q.until)) {
        throw ERRORS.validation([{ field: 'since', message: 'must be before until' }], 'The query has invalid parameters');
      }
      const limit = q.limit ?? 20;
      const after = q.cursor ? decodeCursor(q.cursor, ORDER, (v) => typeof v === 'string' && ID_TEXT.test(v)) : undefined;
      const competitorId = q.competitor_id === 'own' ? null : q.competitor_id;
      const rows = await listPriceChanges(app.ctx.db, accountId, {
        filter: { product_id: q.product_id, competitor_id: competitorId, since: q.since, until: q.until },
        beforeId: after ? String(after.value) : undefined,
        limit: limit + 1,
      });
      // An empty page may mean a filter names something not in the account: only then is it worth asking.
      if (rows.length === 0) {
        if (q.product_id && !(await ownsResource(app.ctx.db, accountId, 'products', q.product_id))) throw ERRORS.notFound('Product');
        if (competitorId && !(await ownsResource(app.ctx.db, accountId, 'competitors', competitorId))) throw ERRORS.notFound('Competitor');
      }
      return keysetPage(rows, limit, toPriceChange, (last) => encodeCursor({ sort: ORDER, value: String(last.id), id: changeId(last.id) }));
    },
  );
};
