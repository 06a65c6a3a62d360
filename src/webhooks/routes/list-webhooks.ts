import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { WebhookListQuerySchema, WebhookListSchema } from '../schemas.js';
import { listWebhooks, toWebhook, WEBHOOK_SORTS } from '../sql.js';

export const listWebhooksRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description: 'Endpoints of the account, newest first, without their secrets; filter by `enabled`.',
        tags: ['Webhooks'],
        querystring: WebhookListQuerySchema,
        response: { 200: withHeaders(WebhookListSchema, 'A page of endpoints'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageRequest(q, WEBHOOK_SORTS, '-created_at');
      return pageOf(await listWebhooks(app.ctx.db, request.principal.accountId, q, page), page, toWebhook);
    },
  );
};
