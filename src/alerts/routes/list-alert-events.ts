import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { toAlertEvent } from '../alert-event.js';
import { AlertEventListQuerySchema, AlertEventListSchema, checkAlertEventFilters } from '../schemas.js';
import { ALERT_EVENT_SORTS, listAlertEvents } from '../sql.js';

export const listAlertEventsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/alert-events',
    {
      schema: {
        operationId: 'listAlertEvents',
        summary: 'List alert events',
        description:
          "What the account's rules fired (test firings included), newest first; filter by rule, product, competitor, " +
          'state (`open`: not acknowledged) and time.',
        tags: ['Alerts'],
        querystring: AlertEventListQuerySchema,
        response: { 200: withHeaders(AlertEventListSchema, 'A page of alert events'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      checkAlertEventFilters(q);
      const page = pageRequest(q, ALERT_EVENT_SORTS, '-created_at');
      return pageOf(await listAlertEvents(app.ctx.db, request.principal.accountId, q, page), page, toAlertEvent);
    },
  );
};
