import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkListingRoute } from './routes/check-listing.js';
import { extractRoute } from './routes/extract.js';

/** POST /listings/{id}/check (check now) and POST /extract (dry run). */
export const checkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(checkListingRoute);
  await app.register(extractRoute);
};
