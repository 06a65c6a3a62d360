import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { AlertEventSchema } from '../alert-event.js';
import { AlertIdParams } from '../schemas.js';
import { testAlert } from '../service.js';

export const testAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/alerts/:id/test',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'testAlert',
        summary: 'Fire a test alert event',
        description:
          'Records an alert event marked `"test": true`, and its `alert.triggered` event (delivered to webhooks like any ' +
          "other), whether the condition holds or not: `current` is the latest observation of a series in the rule's " +
          'scope, `previous` the one before it (both null when the scope has no price yet, and the message says so). ' +
          "The rule's state and daily cap are untouched. No body is needed.",
        tags: ['Alerts'],
        params: AlertIdParams,
        response: {
          201: withHeaders(AlertEventSchema, 'The test alert event', locationHeader),
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      const event = await testAlert(app.ctx.db, request.principal.accountId, request.params.id);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/alert-events/${event.id}`).send(event);
    },
  );
};
