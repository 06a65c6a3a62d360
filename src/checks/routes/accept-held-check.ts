import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { answerHeldCheck } from '../held.js';
import { CheckResultSchema, HeldCheckParams } from '../schemas.js';

export const acceptHeldCheckRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings/:id/checks/:check_id/accept',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'acceptHeldCheck',
        summary: 'Accept a held reading',
        description:
          'Records the listing\'s held reading (a check with `outcome: "held"`) as its price, with the held check\'s time: ' +
          "a price observation, the listing's last price, and what follows from a new price (`price.changed`, alert rules). " +
          "Answers the check, its `held.state` now `accepted`. Only the listing's pending held reading can be accepted, once: " +
          'a check that is not held, or was already accepted, rejected, confirmed by a recheck or replaced by a later check, is a 409 ' +
          'and changes nothing. No body. Send an `Idempotency-Key` to make a retry replay the first answer.',
        tags: ['Listings'],
        params: HeldCheckParams,
        response: {
          200: withHeaders(CheckResultSchema, 'The check, accepted'),
          ...errorResponses(404, 409, 415, 422),
        },
      },
    },
    async (request) =>
      answerHeldCheck(app.ctx.db, request.principal.accountId, request.params.id, request.params.check_id, 'accept'),
  );
};
