import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { answerHeldCheck } from '../held.js';
import { CheckResultSchema, HeldCheckParams } from '../schemas.js';

export const rejectHeldCheckRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/listings/:id/checks/:check_id/reject',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'rejectHeldCheck',
        summary: 'Reject a held reading',
        description:
          'Drops the listing\'s held reading (a check with `outcome: "held"`): nothing is recorded and the listing goes on as ' +
          'before, checked on its schedule. The same price read again later is held again (never recorded by a recheck) until ' +
          'someone accepts it or the page shows another price. Answers the check, its `held.state` now `rejected`. Only the ' +
          "listing's pending held reading can be rejected, once: anything else is a 409 and changes nothing. No body.",
        tags: ['Listings'],
        params: HeldCheckParams,
        response: {
          200: withHeaders(CheckResultSchema, 'The check, rejected'),
          ...errorResponses(404, 409, 415, 422),
        },
      },
    },
    async (request) =>
      answerHeldCheck(app.ctx.db, request.principal.accountId, request.params.id, request.params.check_id, 'reject'),
  );
};
