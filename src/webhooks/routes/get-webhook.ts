import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { WebhookIdParams, WebhookSchema } from '../schemas.js';
import { findWebhook } from '../service.js';
import { toWebhook } from '../sql.js';

export const getWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        description: "One endpoint of the account, without its secret; another account's endpoint is a 404.",
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: { 200: withHeaders(WebhookSchema, 'The endpoint'), ...errorResponses(404) },
      },
    },
    async (request) => toWebhook(await findWebhook(app.ctx.db, request.principal.accountId, request.params.id)),
  );
};
