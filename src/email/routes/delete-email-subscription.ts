import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { EmailSubscriptionIdParams } from '../schemas.js';
import { removeSubscription } from '../service.js';

export const deleteEmailSubscriptionRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/email-subscriptions/:id',
    {
      schema: {
        operationId: 'deleteEmailSubscription',
        summary: 'Delete an email subscription',
        description: 'Nothing more is mailed to it; mail not yet sent goes with it.',
        tags: ['Email'],
        params: EmailSubscriptionIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await removeSubscription(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
