import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getProductTrendsRoute } from './routes/get-product-trends.js';

/** Routes of the prices area's trends part: a product's position and movement, the catalogue's (docs/prices/TRENDS.md). */
export const trendsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(getProductTrendsRoute);
};
