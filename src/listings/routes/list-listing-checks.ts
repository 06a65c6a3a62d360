import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { toCheckResult } from '../../checks/schemas.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ListingCheckListSchema, ListingCheckQuerySchema, ListingIdParams } from '../schemas.js';
import { isCheckCursor, isCheckId, listChecks, ownsResource } from '../sql.js';

/** Cursors of the check log carry this in place of a sort: the log has one order. */
const ORDER = '-started_at';

export const listListingChecksRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/listings/:id/checks',
    {
      schema: {
        operationId: 'listListingChecks',
        summary: 'List a listing\'s recent checks',
        description:
          'The check log, newest first: outcome, HTTP status, the price chosen and every price candidate found on ' +
          'the page with its source, so you can see why a price was chosen and pin a `selector`. The most recent ' +
          'checks of each listing are kept.',
        tags: ['Listings'],
        params: ListingIdParams,
        querystring: ListingCheckQuerySchema,
        response: { 200: withHeaders(ListingCheckListSchema, 'A page of checks'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const q = request.query;
      const limit = q.limit ?? 20;
      const after = q.cursor ? decodeCursor(q.cursor, ORDER, isCheckCursor) : undefined;
      if (after && !isCheckId(after.id)) {
        throw ERRORS.invalidRequest('The cursor is not valid; pass next_cursor from a previous page unchanged', [
          { field: 'cursor', message: 'is not a cursor this API issued' },
        ]);
      }
      const rows = (await listChecks(app.ctx.db, accountId, request.params.id, { ok: q.ok, after, limit: limit + 1 })).map(toCheckResult);
      if (rows.length === 0 && !(await ownsResource(app.ctx.db, accountId, 'listings', request.params.id))) throw ERRORS.notFound('Listing');
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page,
        pagination: {
          limit,
          has_more: hasMore,
          next_cursor: hasMore && last ? encodeCursor({ sort: ORDER, value: last.started_at, id: last.id }) : null,
        },
      };
    },
  );
};
