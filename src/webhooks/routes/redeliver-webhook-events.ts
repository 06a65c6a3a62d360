import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { RedeliverResultSchema, RedeliverSchema, WebhookIdParams } from '../schemas.js';
import { redeliver } from '../service.js';

export const redeliverWebhookEventsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/webhooks/:id/redeliver',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'redeliverWebhookEvents',
        summary: 'Send events to a webhook endpoint again',
        description:
          '`{"event_id": ...}`: one event of the account, again (404 for an unknown event). `{"since": ..., "until": ...}`: ' +
          'every event created in that range (at most 30 days) whose latest attempt to this endpoint failed. Each is ' +
          'queued as a `manual` attempt, due now; answers 202 with how many. A disabled endpoint is a 409.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: RedeliverSchema,
        response: {
          202: withHeaders(RedeliverResultSchema, 'How many attempts were queued'),
          ...errorResponses(404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const queued = await redeliver(app.ctx.db, request.principal.accountId, request.params.id, request.body);
      return reply.code(202).send({ queued });
    },
  );
};
