import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bulkReader } from '../../../db/types.js';
import { contentDispositionHeader, csvHeaders, csvStream } from '../../../http/csv.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { catalogueProductPages } from '../../../products/service.js';
import { checkListFilters } from '../../../products/schemas.js';
import { ACCOUNT_RAW_HEADER, rawCells } from '../csv.js';
import { historyRange } from '../params.js';
import { AccountPricesCsvQuerySchema, AccountPricesCsvSchema } from '../schemas.js';
import { type AccountObservationRow, accountObservationPages } from '../service.js';
import { normaliseCompetitorParam } from './get-price-history.js';

async function* cells(pages: AsyncIterable<AccountObservationRow[]>) {
  for await (const page of pages) yield page.map((r) => [r.product_id, r.sku, ...rawCells(r)]);
}

export const exportAccountPricesCsvRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/prices.csv',
    {
      preValidation: normaliseCompetitorParam,
      config: { streamed: true },
      schema: {
        operationId: 'exportAccountPricesCsv',
        summary: 'Export the price history of every product as CSV',
        description:
          "Every price observation (ours and competitors') between `from` and `to` of every product that the filters " +
          'of `GET /products` pick (all of them by default), in one streamed CSV: one request, counted once against ' +
          'the hourly limit, instead of `GET /products/{id}/prices.csv` per product. Rows go product after product ' +
          "(in `sort` order), each product's oldest first, with the product's id and SKU; `competitor_id` keeps " +
          'some series only (`own` for ours). The range is that of `interval=raw`: default the last 30 days, at most ' +
          '366. See docs/prices/HISTORY.md.',
        tags: ['Prices'],
        produces: ['text/csv'],
        querystring: AccountPricesCsvQuerySchema,
        response: {
          200: withHeaders(
            AccountPricesCsvSchema as never,
            'The observations as CSV (text/csv; charset=utf-8)',
            contentDispositionHeader,
          ),
          ...errorResponses(422),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      // Every check of the request before the headers go out: a mistake is still a JSON error.
      checkListFilters(q);
      const range = historyRange({ ...q, interval: 'raw' });
      // Pages go through the bulk lane: short requests never queue behind them (src/db/types.ts).
      const db = bulkReader(app.ctx.reads.forAccount(request.principal.accountId));
      const products = catalogueProductPages(db, request.principal.accountId, q);
      const rows = accountObservationPages(db, request.principal.accountId, products, range);
      return csvHeaders(reply, 'prices.csv').send(csvStream(ACCOUNT_RAW_HEADER, cells(rows)));
    },
  );
};
