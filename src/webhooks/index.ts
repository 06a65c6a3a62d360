import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createWebhookRoute } from './routes/create-webhook.js';
import { deleteWebhookRoute } from './routes/delete-webhook.js';
import { getWebhookRoute } from './routes/get-webhook.js';
import { listWebhookDeliveriesRoute } from './routes/list-webhook-deliveries.js';
import { listWebhooksRoute } from './routes/list-webhooks.js';
import { redeliverWebhookEventsRoute } from './routes/redeliver-webhook-events.js';
import { rotateWebhookSecretRoute } from './routes/rotate-webhook-secret.js';
import { testWebhookRoute } from './routes/test-webhook.js';
import { updateWebhookRoute } from './routes/update-webhook.js';

/** /webhooks: endpoints, their secrets, tests and delivery log (docs/WEBHOOKS.md). Delivery itself is src/webhooks/delivery/. */
export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listWebhooksRoute);
  await app.register(createWebhookRoute);
  await app.register(getWebhookRoute);
  await app.register(updateWebhookRoute);
  await app.register(deleteWebhookRoute);
  await app.register(rotateWebhookSecretRoute);
  await app.register(testWebhookRoute);
  await app.register(listWebhookDeliveriesRoute);
  await app.register(redeliverWebhookEventsRoute);
};
