import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertEventSchema, toAlertEvent } from '../alert-event.js';
import { AlertEventIdParams } from '../schemas.js';
import { acknowledgeOne } from '../service.js';

export const acknowledgeAlertEventRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/alert-events/:id/acknowledge',
    {
      schema: {
        operationId: 'acknowledgeAlertEvent',
        summary: 'Acknowledge an alert event',
        description:
          'Marks the event as seen and answers it. Idempotent: acknowledging it again keeps the first `acknowledged_at`. ' +
          'No body is needed.',
        tags: ['Alerts'],
        params: AlertEventIdParams,
        response: { 200: withHeaders(AlertEventSchema, 'The acknowledged event'), ...errorResponses(404) },
      },
    },
    async (request) => toAlertEvent(await acknowledgeOne(app.ctx.db, request.principal.accountId, request.params.id)),
  );
};
