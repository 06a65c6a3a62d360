import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { batchCreateListingsRoute } from './routes/batch-create-listings.js';
import { createListingRoute } from './routes/create-listing.js';
import { deleteListingRoute } from './routes/delete-listing.js';
import { getListingRoute } from './routes/get-listing.js';
import { listCompetitorListingsRoute } from './routes/list-competitor-listings.js';
import { listListingChecksRoute } from './routes/list-listing-checks.js';
import { listListingsRoute } from './routes/list-listings.js';
import { listProductListingsRoute } from './routes/list-product-listings.js';
import { updateListingRoute } from './routes/update-listing.js';

/** /listings: the pages where products are monitored, with their state and check log. */
export const listingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listListingsRoute);
  await app.register(createListingRoute);
  await app.register(batchCreateListingsRoute);
  await app.register(getListingRoute);
  await app.register(updateListingRoute);
  await app.register(deleteListingRoute);
  await app.register(listProductListingsRoute);
  await app.register(listCompetitorListingsRoute);
  await app.register(listListingChecksRoute);
};
