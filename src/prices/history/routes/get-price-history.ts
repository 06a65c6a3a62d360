import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { iso } from '../../../http/fields.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { pageOf, pageRequest } from '../../../pagination/page.js';
import { historyRange, splitCompetitorParam } from '../params.js';
import {
  HistoryQuerySchema,
  PriceHistoryObservationsSchema,
  PriceHistorySchema,
  ProductIdParams,
  RAW_LIMIT_DEFAULT,
} from '../schemas.js';
import { bucketRows, rawRows, refusePagingOfBuckets } from '../service.js';
import { historyJson } from '../json.js';
import { RAW_SORTS, toObservation } from '../sql.js';

// Fastify types a serialization schema as a plain record; TypeBox schemas are that at run time.
const OBSERVATIONS_SHAPE = PriceHistoryObservationsSchema as unknown as Record<string, unknown>;

/** `competitor_id` may be repeated or comma-separated; the schema sees one list. */
export async function normaliseCompetitorParam(request: { query: unknown }) {
  const q = request.query as Record<string, unknown>;
  if (q.competitor_id !== undefined) q.competitor_id = splitCompetitorParam(q.competitor_id);
}

export const getPriceHistoryRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id/prices',
    {
      preValidation: normaliseCompetitorParam,
      schema: {
        operationId: 'getPriceHistory',
        summary: "Get a product's price history",
        description:
          'Per series (our own shop, each competitor; one entry per currency a series used) the buckets of the range ' +
          '(`interval` hour, day, week or month, calendar buckets in `tz`) with open, close, min, max, average and ' +
          'count, empty buckets included with count 0; or, with `interval=raw`, the observations themselves, oldest ' +
          "first, a page at a time. Another account's product is a 404. See docs/prices/HISTORY.md.",
        tags: ['Prices'],
        params: ProductIdParams,
        querystring: HistoryQuerySchema,
        response: { 200: withHeaders(PriceHistorySchema, 'The history'), ...errorResponses(404, 422) },
      },
    },
    // The documented 200 is an anyOf of the two shapes; serialised through it, fast-json-stringify
    // would validate the whole answer (thousands of buckets) with ajv to pick the branch. Each
    // branch knows its shape: buckets are written as bytes by historyJson, observations
    // serialise with their shape's own compiled serializer.
    async (request, reply) => {
      const q = request.query;
      const range = historyRange(q);
      const p = { productId: request.params.id, accountId: request.principal.accountId, ...range };
      const head = { object: 'price_history' as const, product_id: p.productId, tz: range.tz };
      if (range.interval !== 'raw') {
        refusePagingOfBuckets(q, range.interval);
        const rows = await bucketRows(
          app.ctx.reads.forAccount(request.principal.accountId),
          { ...p, interval: range.interval },
          app.ctx.config.historyZones,
        );
        const first = rows[0]!;
        // The answer's bytes written directly (historyJson): the same bytes as the schema's
        // serializer would give for the same answer as objects, at a fraction of the CPU, and
        // hashed for the ETag as they are.
        const body = historyJson(
          `{"object":"price_history","product_id":${JSON.stringify(p.productId)},` +
            `"from":"${iso(first.range_start!)}","to":"${iso(first.range_end!)}",` +
            `"tz":${JSON.stringify(range.tz)},"interval":"${range.interval}","series":`,
          rows,
          '}',
        );
        return reply.type('application/json; charset=utf-8').send(body as never); // bytes: no serializer runs
      }
      const page = pageRequest(q, RAW_SORTS, 'observed_at', RAW_LIMIT_DEFAULT);
      const rows = await rawRows(app.ctx.reads.forAccount(request.principal.accountId), p, page);
      reply.serializer(reply.compileSerializationSchema(OBSERVATIONS_SHAPE, '200'));
      return {
        ...head,
        interval: 'raw' as const,
        from: iso(range.from),
        to: iso(range.to),
        ...pageOf(rows, page, toObservation),
      };
    },
  );
};
