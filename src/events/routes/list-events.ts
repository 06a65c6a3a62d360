import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkRange } from '../../pagination/filters.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { DocumentedEventListSchema, EVENT_LIST_SHAPE } from '../payloads.js';
import { EVENT_TYPES, EventListQuerySchema } from '../schemas.js';
import { EVENT_SORTS, listEvents, toEvent } from '../sql.js';

const KNOWN = new Set<string>(EVENT_TYPES);

export const listEventsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'List events',
        description: 'Events of the account, newest first, kept at least 30 days; filter by type and time.',
        tags: ['Events'],
        querystring: EventListQuerySchema,
        response: { 200: withHeaders(DocumentedEventListSchema, 'A page of events'), ...errorResponses(422) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      checkRange(q, 'created_after', 'created_before');
      const types = q.type?.split(',');
      const unknown = types?.filter((t) => !KNOWN.has(t)) ?? [];
      if (unknown.length > 0)
        throw ERRORS.invalidQuery([{ field: 'type', message: `has unknown event types: ${unknown.join(', ')}` }]);
      const page = pageRequest(q, EVENT_SORTS, '-created_at');
      const answer = pageOf(
        await listEvents(app.ctx.db, request.principal.accountId, { ...q, types }, page),
        page,
        toEvent,
      );
      // Events as stored (../payloads.ts); set once the answer exists, so errors keep their serialiser.
      reply.serializer(reply.compileSerializationSchema(EVENT_LIST_SHAPE, '200'));
      return answer;
    },
  );
};
