import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { EmailSubscriptionIdParams, EmailSubscriptionSchema, EmailSubscriptionUpdateSchema } from '../schemas.js';
import { changeSubscription } from '../service.js';
import { toSubscription } from '../sql.js';
import { emailContext } from './context.js';

export const updateEmailSubscriptionRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.patch(
    '/email-subscriptions/:id',
    {
      schema: {
        operationId: 'updateEmailSubscription',
        summary: 'Update an email subscription (only the fields sent)',
        description:
          'Fields not in the body keep their values; the address cannot change (create another subscription). ' +
          '`{"enabled": false}` drops mail not yet sent. `{"enabled": true}` after the address used its unsubscribe ' +
          'link starts a new confirmation: a new code is mailed and nothing else until it comes back.',
        tags: ['Email'],
        params: EmailSubscriptionIdParams,
        body: EmailSubscriptionUpdateSchema,
        response: {
          200: withHeaders(EmailSubscriptionSchema, 'The updated subscription'),
          ...errorResponses(404, 409, 413, 415, 422),
        },
      },
    },
    async (request) =>
      toSubscription(
        await changeSubscription(emailContext(app), request.principal.accountId, request.params.id, request.body),
      ),
  );
};
