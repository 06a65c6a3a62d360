import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { WebhookIdParams, WebhookSchema, WebhookUpdateSchema } from '../schemas.js';
import { changeWebhook } from '../service.js';
import { toWebhook } from '../sql.js';

/** PUT and PATCH behave the same: only the supplied fields change. */
export const updateWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/webhooks/:id',
      schema: {
        operationId: method === 'PUT' ? 'updateWebhook' : 'patchWebhook',
        summary:
          method === 'PUT'
            ? 'Update a webhook endpoint (only the fields sent)'
            : 'Update a webhook endpoint (same as PUT)',
        description:
          'Fields not in the body keep their values; `null` clears `description`. `{"enabled": true}` on a disabled ' +
          'endpoint clears `disabled_reason` and its failing state, so its queued events go out at once; a new `url` ' +
          'does the same for the failing state.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: WebhookUpdateSchema,
        response: { 200: withHeaders(WebhookSchema, 'The updated endpoint'), ...errorResponses(404, 413, 415, 422) },
      },
      handler: async (request) =>
        toWebhook(
          await changeWebhook(app.ctx.db, app.ctx.config, request.principal.accountId, request.params.id, request.body),
        ),
    });
  }
};
