import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getPositionsSummaryRoute } from './routes/get-positions-summary.js';
import { listPositionsRoute } from './routes/list-positions.js';

/** /positions: where each product's price stands among its competitors' (docs/POSITIONS.md). */
export const positionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(getPositionsSummaryRoute);
  await app.register(listPositionsRoute);
};
