import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { DocumentedEventSchema, EVENT_SHAPE } from '../payloads.js';
import { EventIdParams } from '../schemas.js';
import { getEvent, toEvent } from '../sql.js';

export const getEventRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events/:id',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'Get an event',
        description: "One event of the account, as webhooks deliver it; another account's event is a 404.",
        tags: ['Events'],
        params: EventIdParams,
        response: { 200: withHeaders(DocumentedEventSchema, 'The event'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const row = await getEvent(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Event');
      reply.serializer(reply.compileSerializationSchema(EVENT_SHAPE, '200')); // as stored (../payloads.ts)
      return toEvent(row);
    },
  );
};
