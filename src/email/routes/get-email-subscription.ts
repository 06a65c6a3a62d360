import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { EmailSubscriptionIdParams, EmailSubscriptionSchema } from '../schemas.js';
import { findSubscription } from '../service.js';
import { toSubscription } from '../sql.js';

export const getEmailSubscriptionRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/email-subscriptions/:id',
    {
      schema: {
        operationId: 'getEmailSubscription',
        summary: 'Get an email subscription',
        description: "One subscription of the account; another account's is a 404.",
        tags: ['Email'],
        params: EmailSubscriptionIdParams,
        response: { 200: withHeaders(EmailSubscriptionSchema, 'The subscription'), ...errorResponses(404) },
      },
    },
    async (request) =>
      toSubscription(await findSubscription(app.ctx.db, request.principal.accountId, request.params.id)),
  );
};
