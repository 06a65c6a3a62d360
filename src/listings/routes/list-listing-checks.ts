import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { toCheckResult } from '../../checks/schemas.js';
import { accountOwns } from '../../db/ownership.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { nestedPage, pageOf, pageRequest } from '../../pagination/page.js';
import { ListingCheckListSchema, ListingCheckQuerySchema, ListingIdParams } from '../schemas.js';
import { CHECK_LOG_SORTS, listChecks } from '../sql.js';

export const listListingChecksRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/listings/:id/checks',
    {
      schema: {
        operationId: 'listListingChecks',
        summary: "List a listing's recent checks",
        description:
          'The check log, newest first: outcome (`recorded`, `failed` or `held`), HTTP status, the price chosen and every ' +
          'price candidate found on the page with its source, so you can see why a price was chosen and pin a `selector`. ' +
          'A held reading shows why it was held and what became of it (`held`). The most recent checks of each listing are kept.',
        tags: ['Listings'],
        params: ListingIdParams,
        querystring: ListingCheckQuerySchema,
        response: { 200: withHeaders(ListingCheckListSchema, 'A page of checks'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const { db } = app.ctx;
      const page = pageRequest(request.query, CHECK_LOG_SORTS, '-started_at');
      const checks = pageOf(
        await listChecks(db, accountId, request.params.id, request.query, page),
        page,
        toCheckResult,
      );
      return nestedPage(checks, () => accountOwns(db, accountId, 'listings', request.params.id), 'Listing');
    },
  );
};
