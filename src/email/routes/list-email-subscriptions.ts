import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { EmailSubscriptionListQuerySchema, EmailSubscriptionListSchema } from '../schemas.js';
import { listSubscriptions, SUBSCRIPTION_SORTS, toSubscription } from '../sql.js';

export const listEmailSubscriptionsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/email-subscriptions',
    {
      schema: {
        operationId: 'listEmailSubscriptions',
        summary: 'List email subscriptions',
        description: "The account's email subscriptions, newest first. Works whether or not email is on (`SMTP_URL`).",
        tags: ['Email'],
        querystring: EmailSubscriptionListQuerySchema,
        response: { 200: withHeaders(EmailSubscriptionListSchema, 'A page of subscriptions'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const page = pageRequest(request.query, SUBSCRIPTION_SORTS, '-created_at');
      return pageOf(await listSubscriptions(app.ctx.db, request.principal.accountId, page), page, toSubscription);
    },
  );
};
