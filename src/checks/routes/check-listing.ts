import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  errorResponse,
  errorResponses,
  rateLimitHeaders,
  requestIdHeader,
  retryAfterHeader,
  withHeaders,
} from '../../http/schemas.js';
import { BUSY_RETRY_AFTER_SECONDS, checkListingNow } from '../check-now.js';
import { CheckResultSchema, ListingIdSchema, toCheckResult } from '../schemas.js';

export const checkListingRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings/:id/check',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'checkListing',
        summary: 'Check a listing now',
        description:
          "Fetches the listing's page and reads its price now, outside the schedule, and returns the check, recorded like " +
          "a scheduled one: on success a price observation, and the listing's state and next check (one interval from " +
          'now; after a failure, the backoff) updated. A failed check is still a 200 with `outcome: "failed"` and ' +
          '`error`; a price that cannot be right next to the listing\'s last one is a 200 with `outcome: "held"` and `held`: ' +
          'nothing recorded, and (for an enabled listing) a recheck within five minutes. 409 with `Retry-After` (at most ' +
          `${BUSY_RETRY_AFTER_SECONDS} s) while a worker (or another request) is checking the listing, as happens just after ` +
          'it is created: ask again then. Works on disabled listings too. ' +
          'Send an `Idempotency-Key` to make retries replay the first result instead of checking again.',
        tags: ['Listings'],
        params: Type.Object({ id: ListingIdSchema }, { additionalProperties: false }),
        response: {
          200: withHeaders(CheckResultSchema, 'The check, as recorded'),
          ...errorResponses(404, 409),
          409: errorResponse(
            409,
            { ...retryAfterHeader, ...rateLimitHeaders, ...requestIdHeader },
            'The listing is being checked right now (with `Retry-After`: ask again then), or the Idempotency-Key was used for another request',
          ),
        },
      },
    },
    async (request) =>
      toCheckResult(await checkListingNow(app.ctx, request.principal.accountId, request.params.id, request.log)),
  );
};
