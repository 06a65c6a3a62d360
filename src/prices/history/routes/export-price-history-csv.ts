import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { contentDispositionHeader, csvHeaders, csvStream, csvText, type CsvValue } from '../../../http/csv.js';
import { bulkReader } from '../../../db/types.js';
import { eachPage, type PageRequest, pageRequest } from '../../../pagination/page.js';
import { RAW_HEADER, rawCells } from '../csv.js';
import { historyRange } from '../params.js';
import { HistoryCsvQuerySchema, PriceHistoryCsvSchema, ProductIdParams } from '../schemas.js';
import { bucketRows, rawRows } from '../service.js';
import { type Bucket, type HistoryParams, type ObservationRow, RAW_SORTS, toBuckets } from '../sql.js';
import { normaliseCompetitorParam } from './get-price-history.js';

const BUCKET_HEADER = [
  'competitor_id',
  'competitor_name',
  'currency',
  'start',
  'end',
  'open',
  'close',
  'min',
  'max',
  'average',
  'count',
];

/** Rows per query of a raw export: each page is a short statement, and only one page is held at a time. */
export const CSV_PAGE_ROWS = 5000;

function bucketCells(b: Bucket): CsvValue[] {
  return [
    b.competitor_id,
    b.competitor_name,
    b.currency,
    b.start,
    b.end,
    b.open,
    b.close,
    b.min,
    b.max,
    b.average,
    b.count,
  ];
}

async function* rawCsvRows(pages: AsyncIterable<ObservationRow[]>) {
  for await (const page of pages) yield page.map(rawCells);
}

export const exportPriceHistoryCsvRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products/:id/prices.csv',
    {
      preValidation: normaliseCompetitorParam,
      config: { streamed: true },
      schema: {
        operationId: 'exportPriceHistoryCsv',
        summary: "Export a product's price history as CSV",
        description:
          'The same parameters and data as `GET /products/{id}/prices`, as a CSV file: one row per bucket (empty ' +
          'buckets included) or, with `interval=raw`, per observation, all of them (no pages; large exports are ' +
          "streamed). Text cells that a spreadsheet would run as a formula get a leading `'`. See docs/prices/HISTORY.md.",
        tags: ['Prices'],
        produces: ['text/csv'],
        params: ProductIdParams,
        querystring: HistoryCsvQuerySchema,
        response: {
          200: withHeaders(
            PriceHistoryCsvSchema as never,
            'The history as CSV (text/csv; charset=utf-8)',
            contentDispositionHeader,
          ),
          ...errorResponses(404, 422),
        },
      },
    },
    async (request, reply) => {
      const range = historyRange(request.query);
      const p: HistoryParams = { productId: request.params.id, accountId: request.principal.accountId, ...range };
      const filename = `${p.productId}-prices-${range.interval}.csv`;
      if (range.interval !== 'raw') {
        const rows = await bucketRows(
          app.ctx.reads.forAccount(request.principal.accountId),
          { ...p, interval: range.interval },
          app.ctx.config.historyZones,
        );
        return csvHeaders(reply, filename).send(csvText(BUCKET_HEADER, toBuckets(rows).map(bucketCells)));
      }
      // Pages go through the bulk lane: short requests never queue behind them (src/db/types.ts).
      const db = bulkReader(app.ctx.reads.forAccount(request.principal.accountId));
      const load = (page: PageRequest<ObservationRow>) => rawRows(db, p, page);
      const page = pageRequest({ limit: CSV_PAGE_ROWS }, RAW_SORTS, 'observed_at');
      const first = await load(page); // before the headers go out: a 404 is still possible here
      return csvHeaders(reply, filename).send(csvStream(RAW_HEADER, rawCsvRows(eachPage(page, load, first))));
    },
  );
};
