import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { acceptHeldCheckRoute } from './routes/accept-held-check.js';
import { checkListingRoute } from './routes/check-listing.js';
import { extractPriceRoute } from './routes/extract-price.js';
import { rejectHeldCheckRoute } from './routes/reject-held-check.js';

/** POST /listings/{id}/check (check now), the answers to a held reading, and POST /extract (dry run). */
export const checkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(checkListingRoute);
  await app.register(acceptHeldCheckRoute);
  await app.register(rejectHeldCheckRoute);
  await app.register(extractPriceRoute);
};
