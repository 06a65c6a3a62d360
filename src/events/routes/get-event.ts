import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { EventIdParams, EventSchema } from '../schemas.js';
import { getEvent, toEvent } from '../sql.js';

export const getEventRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events/:id',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'Get an event',
        description: 'One event of the account, as webhooks deliver it; another account\'s event is a 404.',
        tags: ['Events'],
        params: EventIdParams,
        response: { 200: withHeaders(EventSchema, 'The event'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await getEvent(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Event');
      return toEvent(row);
    },
  );
};
