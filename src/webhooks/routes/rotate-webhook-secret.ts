import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { RotateSecretSchema, WebhookIdParams, WebhookWithSecretSchema } from '../schemas.js';
import { rotateSecret } from '../service.js';
import { toWebhook } from '../sql.js';

export const rotateWebhookSecretRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config: { idempotent: true, optionalBody: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Rotate a webhook endpoint's secret",
        description:
          'Makes a new signing secret and answers it (the only other time a secret is shown). The previous secret keeps ' +
          "signing beside the new one (`webhook-signature` carries both) for the deployment's overlap, 24 hours by " +
          'default, or for `expire_previous_in_seconds` when that is shorter (0: at once). The body is optional.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: RotateSecretSchema,
        response: {
          200: withHeaders(WebhookWithSecretSchema, 'The endpoint with its new secret'),
          ...errorResponses(404, 413, 415, 422),
        },
      },
    },
    async (request) => {
      const row = await rotateSecret(
        app.ctx.db,
        app.ctx.config,
        request.principal.accountId,
        request.params.id,
        request.body,
      );
      return { ...toWebhook(row), secret: row.secret };
    },
  );
};
