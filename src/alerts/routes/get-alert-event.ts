import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertEventSchema, toAlertEvent } from '../alert-event.js';
import { AlertEventIdParams } from '../schemas.js';
import { getAlertEvent } from '../sql.js';

export const getAlertEventRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/alert-events/:id',
    {
      schema: {
        operationId: 'getAlertEvent',
        summary: 'Get an alert event',
        description: "An alert event of the calling account; another account's is a 404.",
        tags: ['Alerts'],
        params: AlertEventIdParams,
        response: { 200: withHeaders(AlertEventSchema, 'The alert event'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await getAlertEvent(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Alert event');
      return toAlertEvent(row);
    },
  );
};
