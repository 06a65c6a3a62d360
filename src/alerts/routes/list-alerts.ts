import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { AlertListQuerySchema, AlertListSchema } from '../schemas.js';
import { ALERT_SORTS, listAlerts, toAlert } from '../sql.js';

export const listAlertsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/alerts',
    {
      schema: {
        operationId: 'listAlerts',
        summary: 'List alert rules',
        description: 'Rules of the account, newest first by default; filter by `enabled`, scope and `condition_type`.',
        tags: ['Alerts'],
        querystring: AlertListQuerySchema,
        response: { 200: withHeaders(AlertListSchema, 'A page of rules'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageRequest(q, ALERT_SORTS, '-created_at');
      return pageOf(await listAlerts(app.ctx.db, request.principal.accountId, q, page), page, toAlert);
    },
  );
};
