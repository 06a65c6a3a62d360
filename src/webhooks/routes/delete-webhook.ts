import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { WebhookIdParams } from '../schemas.js';
import { removeWebhook } from '../service.js';

export const deleteWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description: 'Nothing more is sent to it; its delivery log and pending deliveries go with it.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await removeWebhook(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
