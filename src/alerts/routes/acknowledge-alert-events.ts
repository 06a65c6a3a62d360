import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { toAlertEvent } from '../alert-event.js';
import { AcknowledgedSchema, AcknowledgeManySchema } from '../schemas.js';
import { acknowledgeMany } from '../service.js';

export const acknowledgeAlertEventsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/alert-events/acknowledge',
    {
      schema: {
        operationId: 'acknowledgeAlertEvents',
        summary: 'Acknowledge many alert events',
        description:
          'Acknowledges each event of `ids` (1 to 1000) that is in the account and answers them with `count`; one ' +
          'acknowledged before keeps its `acknowledged_at`. Ids that are not alert events of the account are listed in ' +
          '`not_found` and change nothing; the others are acknowledged all the same.',
        tags: ['Alerts'],
        body: AcknowledgeManySchema,
        response: { 200: withHeaders(AcknowledgedSchema, 'The acknowledged events'), ...errorResponses(413, 415, 422) },
      },
    },
    async (request) => {
      const { rows, notFound } = await acknowledgeMany(app.ctx.db, request.principal.accountId, request.body.ids);
      return { data: rows.map(toAlertEvent), count: rows.length, not_found: notFound };
    },
  );
};
