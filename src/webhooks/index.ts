import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createWebhookRoute } from './routes/create-webhook.js';
import { deleteWebhookRoute } from './routes/delete-webhook.js';
import { getWebhookRoute } from './routes/get-webhook.js';
import { listDeliveriesRoute } from './routes/list-deliveries.js';
import { listWebhooksRoute } from './routes/list-webhooks.js';
import { redeliverRoute } from './routes/redeliver.js';
import { rotateSecretRoute } from './routes/rotate-secret.js';
import { testWebhookRoute } from './routes/test-webhook.js';
import { updateWebhookRoute } from './routes/update-webhook.js';

/** /webhooks: endpoints, their secrets, tests and delivery log (docs/WEBHOOKS.md). Delivery itself is src/webhooks/delivery/. */
export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listWebhooksRoute);
  await app.register(createWebhookRoute);
  await app.register(getWebhookRoute);
  await app.register(updateWebhookRoute);
  await app.register(deleteWebhookRoute);
  await app.register(rotateSecretRoute);
  await app.register(testWebhookRoute);
  await app.register(listDeliveriesRoute);
  await app.register(redeliverRoute);
};
