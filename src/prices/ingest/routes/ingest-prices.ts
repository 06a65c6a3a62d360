import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ErrorDetail } from '../../../http/errors.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { compileBodyValidator, toDetails, validatorCompiler } from '../../../http/validation.js';
import { INGEST_MAX, IngestBatchSchema, IngestResultSchema, ObservationCreateSchema } from '../schemas.js';
import { ingestObservations } from '../service.js';
import { toObservation } from '../sql.js';

// The route validates only the envelope, so one bad item is reported as that item's result
// instead of failing the whole request; items are checked below with ObservationCreateSchema.
const Envelope = Type.Object(
  {
    observations: Type.Array(Type.Unknown(), { minItems: 1, maxItems: INGEST_MAX }),
    atomic: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ingestPricesRoute: FastifyPluginAsyncTypebox = async (app) => {
  const validateItem = compileBodyValidator(ObservationCreateSchema);
  app.post(
    '/prices',
    {
      bodyLimit: app.ctx.config.batchBodyLimit,
      config: { idempotent: true },
      validatorCompiler: (req) => validatorCompiler(req.httpPart === 'body' ? { ...req, schema: Envelope } : req),
      schema: {
        operationId: 'ingestPrices',
        summary: 'Record up to 1000 price observations',
        description:
          'Prices seen by your own systems: our own prices (no `competitor_id`) or a competitor\'s, optionally on one of ' +
          'its listings. Each item is validated and recorded on its own and reported in `data` with its index and ' +
          'status (201; 404 for a product, competitor or listing that is not in the account; 422 for invalid fields). ' +
          'With `atomic: true` either every item is recorded or none is, and the failures come back as one 422. ' +
          'Observations may arrive in any order: one older than its series\' latest goes into the history only. ' +
          'A new latest price that differs from the one before is recorded as a price change (`GET /price-changes`). ' +
          'Send an `Idempotency-Key` to make retries safe.',
        tags: ['Prices'],
        body: IngestBatchSchema,
        response: { 200: withHeaders(IngestResultSchema, 'Per-item results'), ...errorResponses(409, 413, 415, 422) },
      },
    },
    async (request) => {
      const now = new Date();
      const body = request.body as { observations: unknown[]; atomic?: boolean };
      const invalid = new Map<number, ErrorDetail[]>();
      body.observations.forEach((item, i) => {
        if (!validateItem(item)) invalid.set(i, toDetails(validateItem.errors ?? []));
      });
      const results = await ingestObservations(app.ctx.db, request.principal.accountId, body.observations, invalid, body.atomic ?? false, now);
      const created = results.filter((r) => r.status === 201).length;
      return {
        data: results.map((r) =>
          r.status === 201
            ? { index: r.index, status: r.status, observation: toObservation(r.row) }
            : { index: r.index, status: r.status, error: { code: r.code, error: r.error, details: r.details } },
        ),
        created,
        failed: results.length - created,
      };
    },
  );
};
