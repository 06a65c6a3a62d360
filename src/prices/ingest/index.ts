import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listPriceChangesRoute } from '../changes/routes/list-price-changes.js';
import { summarizePriceChangesRoute } from '../changes/routes/summarize-price-changes.js';
import { ingestPricesRoute } from './routes/ingest-prices.js';

/** Routes of the prices area's write side: POST /prices and the changes it records (docs/prices/INGESTION.md). */
export const ingestRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(ingestPricesRoute);
  await app.register(listPriceChangesRoute);
  await app.register(summarizePriceChangesRoute);
};
