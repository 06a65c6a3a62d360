import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { WebhookCreateSchema, WebhookWithSecretSchema } from '../schemas.js';
import { createWebhook } from '../service.js';
import { toWebhook } from '../sql.js';

export const createWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/webhooks',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint',
        description:
          '`url` is required (http or https; private, loopback, link-local and cloud metadata addresses and URLs with ' +
          'credentials are refused with a 422). `event_types` empty or left out: every event. The answer carries the ' +
          'signing `secret`, shown this once (and again only by rotate-secret). Send an `Idempotency-Key` to make retries safe.',
        tags: ['Webhooks'],
        body: WebhookCreateSchema,
        response: {
          201: withHeaders(WebhookWithSecretSchema, 'The created endpoint, with its secret', locationHeader),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createWebhook(app.ctx.db, app.ctx.config, request.principal.accountId, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply
        .code(201)
        .header('Location', `${base}/webhooks/${row.id}`)
        .send({ ...toWebhook(row), secret: row.secret });
    },
  );
};
