import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { EmailSubscriptionCreateSchema, EmailSubscriptionSchema } from '../schemas.js';
import { createSubscription } from '../service.js';
import { toSubscription } from '../sql.js';
import { emailContext } from './context.js';

export const createEmailSubscriptionRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/email-subscriptions',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createEmailSubscription',
        summary: 'Subscribe an address to events by email',
        description:
          'Creates an unconfirmed subscription and mails a 6-digit code to `address`; nothing else is mailed until ' +
          '`POST /email-subscriptions/{id}/confirm` returns the code. `event_types` defaults to `["alert.triggered"]` ' +
          '(empty: every type); `digest` `daily` or `weekly` mails one digest at `digest_hour` in `time_zone` instead of ' +
          'a mail per minute. 409 `email_disabled` when the server has no `SMTP_URL`.',
        tags: ['Email'],
        body: EmailSubscriptionCreateSchema,
        response: {
          201: withHeaders(
            EmailSubscriptionSchema,
            'The subscription, unconfirmed; the code is on its way',
            locationHeader,
          ),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createSubscription(emailContext(app), request.principal.accountId, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/email-subscriptions/${row.id}`).send(toSubscription(row));
    },
  );
};
