import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertPreviewResultSchema, AlertPreviewSchema, PREVIEW_MAX_DAYS, previewAlert } from '../preview.js';

export const previewAlertsRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/alerts/preview',
    {
      schema: {
        operationId: 'previewAlert',
        summary: 'Preview an alert rule over stored prices',
        description:
          'Runs a rule body (as for `POST /alerts`) over the observations stored between `from` (inclusive) and `to` ' +
          `(exclusive, at most ${PREVIEW_MAX_DAYS} days later), from a fresh state, with the same semantics as live ` +
          'evaluation, and answers the alert events it would have created (`id` and `alert_id` null, `created_at` the ' +
          'firing observation\'s time). Writes nothing. `not_cheapest` and `listing_failing` cannot be previewed (422). ' +
          'See docs/alerts/firing.md.',
        tags: ['Alerts'],
        body: AlertPreviewSchema,
        response: {
          200: withHeaders(AlertPreviewResultSchema, 'The events the rule would have fired, oldest first'),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request) => previewAlert(app.ctx.db, request.principal.accountId, request.body),
  );
};
