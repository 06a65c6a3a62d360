import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponse, errorResponses, rateLimitHeaders, requestIdHeader, withHeaders } from '../../http/schemas.js';
import { EmailConfirmSchema, EmailSubscriptionIdParams, EmailSubscriptionSchema } from '../schemas.js';
import { confirmSubscription } from '../service.js';
import { toSubscription } from '../sql.js';
import { emailContext } from './context.js';

export const confirmEmailSubscriptionRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/email-subscriptions/:id/confirm',
    {
      schema: {
        operationId: 'confirmEmailSubscription',
        summary: 'Confirm an email subscription with its mailed code',
        description:
          '`code`: the 6 digits mailed at creation. A wrong code is a 422 saying how many attempts are left; the fifth ' +
          'wrong code locks the subscription for good (410 `gone`: delete it and create it again). An already ' +
          'confirmed subscription is a 409.',
        tags: ['Email'],
        params: EmailSubscriptionIdParams,
        body: EmailConfirmSchema,
        response: {
          200: withHeaders(EmailSubscriptionSchema, 'The confirmed subscription'),
          ...errorResponses(404, 409, 413, 415, 422),
          410: errorResponse(410, { ...rateLimitHeaders, ...requestIdHeader }),
        },
      },
    },
    async (request) =>
      toSubscription(
        await confirmSubscription(emailContext(app), request.principal.accountId, request.params.id, request.body.code),
      ),
  );
};
