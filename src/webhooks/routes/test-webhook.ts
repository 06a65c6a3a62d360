import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DocumentedEventSchema, EVENT_SHAPE } from '../../events/service.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { WebhookIdParams, WebhookTestSchema } from '../schemas.js';
import { sendTestEvent } from '../service.js';

export const testWebhookRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/webhooks/:id/test',
    {
      config: { idempotent: true, optionalBody: true },
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a test event to a webhook endpoint',
        description:
          'Records a `webhook.test` event (listed at /events like any other) and queues it for this endpoint only, ' +
          'whatever its `event_types`; answers 202 with the event at once, and the attempt shows in the delivery log. ' +
          'A disabled endpoint is a 409. The body is optional: `message` replaces the default text of `data.message`.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        body: WebhookTestSchema,
        response: {
          202: withHeaders(DocumentedEventSchema, 'The test event, queued for delivery'),
          ...errorResponses(404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const event = await sendTestEvent(
        app.ctx.db,
        request.principal.accountId,
        request.params.id,
        request.body.message,
      );
      // As stored (events/payloads.ts); set once the answer exists, so errors keep their serialiser.
      reply.serializer(reply.compileSerializationSchema(EVENT_SHAPE, '202'));
      return reply.code(202).send(event);
    },
  );
};
