import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { acknowledgeAlertEventRoute } from './routes/acknowledge-alert-event.js';
import { acknowledgeAlertEventsRoute } from './routes/acknowledge-alert-events.js';
import { createAlertRoute } from './routes/create-alert.js';
import { deleteAlertRoute } from './routes/delete-alert.js';
import { getAlertRoute } from './routes/get-alert.js';
import { getAlertEventRoute } from './routes/get-alert-event.js';
import { listAlertEventsRoute } from './routes/list-alert-events.js';
import { listAlertsRoute } from './routes/list-alerts.js';
import { matchAlertRoute } from './routes/match-alert.js';
import { previewAlertRoute } from './routes/preview-alert.js';
import { testAlertRoute } from './routes/test-alert.js';
import { updateAlertRoute } from './routes/update-alert.js';

/** /alerts and /alert-events (design/API.md "Alerts", docs/ALERTS.md). */
export const alertRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listAlertsRoute);
  await app.register(createAlertRoute);
  await app.register(previewAlertRoute);
  await app.register(matchAlertRoute);
  await app.register(getAlertRoute);
  await app.register(updateAlertRoute);
  await app.register(deleteAlertRoute);
  await app.register(testAlertRoute);
  await app.register(listAlertEventsRoute);
  await app.register(getAlertEventRoute);
  await app.register(acknowledgeAlertEventRoute);
  await app.register(acknowledgeAlertEventsRoute);
};
