import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { batchAnswer, batchRoute } from '../../../batches/batch.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { IngestBatchSchema, IngestResultSchema } from '../schemas.js';
import { ingestObservations } from '../service.js';
import { toObservation } from '../sql.js';

export const ingestPricesRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/prices',
    {
      ...batchRoute('observations', app.ctx.config.batchBodyLimit),
      schema: {
        operationId: 'ingestPrices',
        summary: 'Record up to 1000 price observations',
        description:
          "Prices seen by your own systems: our own prices (no `competitor_id`) or a competitor's, optionally on one of " +
          'its listings. Each item is validated and recorded on its own and reported in `data` with its index and ' +
          'status (201; 404 for a product, competitor or listing that is not in the account; 422 for invalid fields). ' +
          'With `atomic: true` either every item is recorded or none is, and the failures come back as one 422. ' +
          "Observations may arrive in any order: one older than its series' latest goes into the history only. " +
          'A new latest price that differs from the one before is recorded as a price change (`GET /price-changes`). ' +
          'Send an `Idempotency-Key` to make retries safe.',
        tags: ['Prices'],
        body: IngestBatchSchema,
        response: {
          200: withHeaders(IngestResultSchema.documented, 'Per-item results'),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const now = new Date();
      const { observations, atomic } = request.body as { observations: unknown[]; atomic?: boolean };
      const results = await ingestObservations(
        app.ctx.db,
        request.principal.accountId,
        observations,
        atomic ?? false,
        now,
        { alertInlineMax: app.ctx.config.alertInlineMax },
      );
      const answer = batchAnswer(results, 'observation', toObservation);
      // Set once the answer exists: an error thrown before must keep the error serialiser.
      reply.serializer(reply.compileSerializationSchema(IngestResultSchema.shape, '200')); // the loose shape (batches/schemas.ts)
      return answer;
    },
  );
};
