import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { contentDispositionHeader, csvHeaders, csvStream, type CsvValue } from '../../http/csv.js';
import { bulkReader } from '../../db/types.js';
import { iso } from '../../http/fields.js';
import { eachPage, type PageRequest, pageRequest } from '../../pagination/page.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { checkListFilters, ProductCatalogueQuerySchema } from '../schemas.js';
import { listProducts, type MonitoringColumns, PRODUCT_SORTS, type ProductRow } from '../sql.js';

/** Products per query: each page is one short statement, and only one page is held at a time. */
export const CATALOGUE_PAGE_ROWS = 500;

export const CATALOGUE_HEADER = [
  'id',
  'sku',
  'name',
  'brand',
  'category',
  'currency',
  'base_price',
  'own_price',
  'own_price_source',
  'lowest_competitor_price',
  'average_competitor_price',
  'highest_competitor_price',
  'cheapest_competitor_id',
  'cheapest_competitor_name',
  'rank',
  'price_index',
  'competitors_compared',
  'competitors_left_out',
  'listing_count',
  'last_checked_at',
] as const;

const CatalogueCsvSchema = {
  type: 'string',
  pattern: '^id,sku,name,',
  // Every product of the account, streamed: bounded by the catalogue, not by a byte count.
  maxLength: Number.MAX_SAFE_INTEGER,
  description:
    `RFC 4180 CSV, UTF-8, CRLF line ends, a header row first: ${CATALOGUE_HEADER.join(', ')}. Amounts are in the ` +
    "product's currency; empty cells are nulls. Text cells a spreadsheet would run as a formula get a leading `'`.",
};

type Row = ProductRow & MonitoringColumns;
const num = (v: string | null) => (v === null ? null : Number(v));

function cells(r: Row): CsvValue[] {
  return [
    r.id,
    r.sku,
    r.name,
    r.brand,
    r.category,
    r.currency,
    Number(r.base_price),
    num(r.pos_own_price),
    r.pos_own_observed ? 'observation' : 'base_price',
    num(r.pos_lowest),
    num(r.pos_average),
    num(r.pos_highest),
    r.pos_cheapest_id,
    r.pos_cheapest_name ?? null,
    r.pos_rank,
    num(r.pos_price_index),
    Number(r.pos_compared),
    Number(r.pos_left_out),
    Number(r.listing_count),
    r.last_checked_at ? iso(r.last_checked_at) : null,
  ];
}

export const exportProductCatalogueCsvRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/products.csv',
    {
      config: { streamed: true },
      schema: {
        operationId: 'exportProductCatalogueCsv',
        summary: 'Export the catalogue with latest positions as CSV',
        description:
          'Every product of the account matching the filters of `GET /products` (same parameters and sort, no pages), ' +
          'one row each with our price, the lowest, average and highest compared competitor price, the cheapest ' +
          'competitor, our rank and price index, as `monitoring.position` and `GET /products/{id}/trends` define them ' +
          '(docs/prices/TRENDS.md). Streamed, a page of products per query.',
        tags: ['Products'],
        produces: ['text/csv'],
        querystring: ProductCatalogueQuerySchema,
        response: {
          200: withHeaders(
            CatalogueCsvSchema as never,
            'The catalogue as CSV (text/csv; charset=utf-8)',
            contentDispositionHeader,
          ),
          ...errorResponses(422),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      checkListFilters(q);
      // Pages go through the bulk lane: short requests never queue behind them (src/db/types.ts).
      const db = bulkReader(app.ctx.reads.forAccount(request.principal.accountId));
      const load = (page: PageRequest<ProductRow>) => listProducts(db, request.principal.accountId, q, page);
      const page = pageRequest({ sort: q.sort, limit: CATALOGUE_PAGE_ROWS }, PRODUCT_SORTS, '-created_at');
      const first = await load(page); // before the headers go out: a failure is still a JSON error here
      return csvHeaders(reply, 'products.csv').send(csvStream(CATALOGUE_HEADER, rowsOf(eachPage(page, load, first))));
    },
  );
};

async function* rowsOf(pages: AsyncIterable<Row[]>) {
  for await (const page of pages) yield page.map(cells);
}
