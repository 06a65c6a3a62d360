import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { exportAccountPricesCsvRoute } from './routes/export-account-prices-csv.js';
import { exportPriceHistoryCsvRoute } from './routes/export-price-history-csv.js';
import { getPriceHistoryRoute } from './routes/get-price-history.js';

/** Routes of the prices area's history part (docs/prices/HISTORY.md). */
export const historyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(getPriceHistoryRoute);
  await app.register(exportPriceHistoryCsvRoute);
  await app.register(exportAccountPricesCsvRoute);
};
