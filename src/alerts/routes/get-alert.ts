import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertIdParams, AlertSchema } from '../schemas.js';
import { getAlert, toAlert } from '../sql.js';

export const getAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/alerts/:id',
    {
      schema: {
        operationId: 'getAlert',
        summary: 'Get an alert rule',
        description: "A rule of the calling account; another account's rule is a 404.",
        tags: ['Alerts'],
        params: AlertIdParams,
        response: { 200: withHeaders(AlertSchema, 'The rule'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const row = await getAlert(app.ctx.db, request.principal.accountId, request.params.id);
      if (!row) throw ERRORS.notFound('Alert');
      return toAlert(row);
    },
  );
};
