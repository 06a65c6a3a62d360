import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertIdParams, AlertSchema, AlertUpdateSchema } from '../schemas.js';
import { changeAlert } from '../service.js';
import { toAlert } from '../sql.js';

/** PUT and PATCH behave the same: only the supplied fields change; `{"enabled": false}` disables a rule. */
export const updateAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/alerts/:id',
      schema: {
        operationId: method === 'PUT' ? 'updateAlert' : 'patchAlert',
        summary:
          method === 'PUT' ? 'Update an alert rule (only the fields sent)' : 'Update an alert rule (same as PUT)',
        description:
          'Fields not in the body keep their values; `null` clears a scope field or `daily_cap`. Send `{"enabled": false}` ' +
          'to disable the rule and `{"enabled": true}` to enable it again. A new condition or scope clears what the ' +
          "rule remembered (streaks, re-arm, the day's cap).",
        tags: ['Alerts'],
        params: AlertIdParams,
        body: AlertUpdateSchema,
        response: { 200: withHeaders(AlertSchema, 'The updated rule'), ...errorResponses(404, 413, 415, 422) },
      },
      handler: async (request) =>
        toAlert(await changeAlert(app.ctx.db, request.principal.accountId, request.params.id, request.body)),
    });
  }
};
