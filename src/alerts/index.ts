import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createAlertRoute } from './routes/create-alert.js';
import { deleteAlertRoute } from './routes/delete-alert.js';
import { getAlertRoute } from './routes/get-alert.js';
import { listAlertsRoute } from './routes/list-alerts.js';
import { updateAlertRoute } from './routes/update-alert.js';

/** /alerts and /alert-events (design/API.md "Alerts", docs/ALERTS.md). */
export const alertRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listAlertsRoute);
  await app.register(createAlertRoute);
  await app.register(getAlertRoute);
  await app.register(updateAlertRoute);
  await app.register(deleteAlertRoute);
};
