import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { iso } from '../../../http/fields.js';
import { errorResponses, withHeaders } from '../../../http/schemas.js';
import { PriceChangeSummaryQuerySchema, PriceChangeSummarySchema } from '../schemas.js';
import { summarizePriceChanges } from '../sql.js';

export const summarizePriceChangesRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/price-changes/summary',
    {
      schema: {
        operationId: 'summarizePriceChanges',
        summary: 'Count price changes since an instant',
        description:
          "How the account's prices moved from `since` until now: the changes observed in that time counted by kind " +
          '(each count is the length of `GET /price-changes?since=...&kind=...`), the mean percentage of the rises and ' +
          'falls, and how many price series were observed and how many of them kept their price. `series=own` counts only our ' +
          "own prices, `series=competitors` only the competitors' (the Overview shows them apart). Read-only, one statement.",
        tags: ['Prices'],
        querystring: PriceChangeSummaryQuerySchema,
        response: { 200: withHeaders(PriceChangeSummarySchema, "The period's price movement"), ...errorResponses(422) },
      },
    },
    async (request) => {
      const { since, series } = request.query;
      const r = await summarizePriceChanges(
        app.ctx.reads.forAccount(request.principal.accountId),
        request.principal.accountId,
        since,
        series,
      );
      const n = (v: string) => Number(v);
      return {
        object: 'price_change_summary' as const,
        since: iso(new Date(since)),
        until: iso(r.until),
        changes: n(r.changes),
        up: n(r.up),
        down: n(r.down),
        back_in_stock: n(r.back_in_stock),
        out_of_stock: n(r.out_of_stock),
        average_percent: r.average_percent === null ? null : Number(r.average_percent),
        series_observed: n(r.series_observed),
        series_unchanged: n(r.series_unchanged),
      };
    },
  );
};
