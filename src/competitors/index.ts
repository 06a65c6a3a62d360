import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getCompetitorAnalysisRoute } from './routes/get-competitor-analysis.js';
import { createCompetitorRoute } from './routes/create-competitor.js';
import { deleteCompetitorRoute } from './routes/delete-competitor.js';
import { getCompetitorRoute } from './routes/get-competitor.js';
import { listCompetitorsRoute } from './routes/list-competitors.js';
import { updateCompetitorRoute } from './routes/update-competitor.js';

/** /competitors: the spec's Competitors area ("competitor tracking and analysis"). */
export const competitorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listCompetitorsRoute);
  await app.register(createCompetitorRoute);
  await app.register(getCompetitorRoute);
  await app.register(updateCompetitorRoute);
  await app.register(deleteCompetitorRoute);
  await app.register(getCompetitorAnalysisRoute);
};
