import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getEventRoute } from './routes/get-event.js';
import { listEventsRoute } from './routes/list-events.js';

/** /events: what happened in the account, as webhooks deliver it (docs/EVENTS.md). */
export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listEventsRoute);
  await app.register(getEventRoute);
};
