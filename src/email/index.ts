import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { confirmEmailSubscriptionRoute } from './routes/confirm-email-subscription.js';
import { createEmailSubscriptionRoute } from './routes/create-email-subscription.js';
import { deleteEmailSubscriptionRoute } from './routes/delete-email-subscription.js';
import { getEmailSubscriptionRoute } from './routes/get-email-subscription.js';
import { listEmailSubscriptionsRoute } from './routes/list-email-subscriptions.js';
import { unsubscribeEmailOneClickRoute } from './routes/unsubscribe-email-one-click.js';
import { unsubscribeEmailRoute } from './routes/unsubscribe-email.js';
import { updateEmailSubscriptionRoute } from './routes/update-email-subscription.js';

/** /email-subscriptions (docs/EMAIL.md): under /api/v1, with a key. Sending is src/email/worker.ts. */
export const emailRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listEmailSubscriptionsRoute);
  await app.register(createEmailSubscriptionRoute);
  await app.register(getEmailSubscriptionRoute);
  await app.register(updateEmailSubscriptionRoute);
  await app.register(deleteEmailSubscriptionRoute);
  await app.register(confirmEmailSubscriptionRoute);
};

/** The unsubscribe link of every mail, at the root: it needs no key. */
export const emailPublicRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(unsubscribeEmailRoute);
  await app.register(unsubscribeEmailOneClickRoute);
};
