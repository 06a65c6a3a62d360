import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { historyRoutes } from './history/index.js';
import { ingestRoutes } from './ingest/index.js';
import { trendsRoutes } from './trends/index.js';

/** The spec's Prices area: ingestion and changes, history, trends and positions (docs/PRICES.md). */
export const priceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(ingestRoutes);
  await app.register(historyRoutes);
  await app.register(trendsRoutes);
};
