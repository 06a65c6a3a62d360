import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { deleteExchangeRateRoute } from './routes/delete-exchange-rate.js';
import { getExchangeRateRoute } from './routes/get-exchange-rate.js';
import { listExchangeRatesRoute } from './routes/list-exchange-rates.js';
import { putExchangeRateRoute } from './routes/put-exchange-rate.js';

/** /exchange-rates: the rates an account sets for comparing prices across currencies (docs/prices/INGESTION.md). */
export const exchangeRateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listExchangeRatesRoute);
  await app.register(getExchangeRateRoute);
  await app.register(putExchangeRateRoute);
  await app.register(deleteExchangeRateRoute);
};
