import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkListingNow } from '../check-now.js';
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
          'Fetches the listing\'s page and reads its price now, outside the schedule, and returns the check, recorded like ' +
          'a scheduled one: on success a price observation, and the listing\'s state and next check (one interval from ' +
          'now; after a failure, the backoff) updated. A failed check is still a 200 with `outcome: "failed"` and ' +
          '`error`; a price that cannot be right next to the listing\'s last one is a 200 with `outcome: "held"` and `held`: ' +
          'nothing recorded, and (for an enabled listing) a recheck within five minutes. 409 while a worker (or another request) ' +
          'is checking the listing. Works on disabled listings too. ' +
          'Send an `Idempotency-Key` to make retries replay the first result instead of checking again.',
        tags: ['Listings'],
        params: Type.Object({ id: ListingIdSchema }, { additionalProperties: false }),
        response: {
          200: withHeaders(CheckResultSchema, 'The check, as recorded'),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => toCheckResult(await checkListingNow(app.ctx, request.principal.accountId, request.params.id, request.log)),
  );
};
