import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientGone } from '../../http/client-gone.js';
import { HeavyLane } from '../../http/heavy-lane.js';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertPreviewResultSchema, AlertPreviewSchema, PREVIEW_MAX_DAYS, previewAlert } from '../preview.js';

export const previewAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { alertPreviewConcurrency, alertPreviewTimeoutMs } = app.ctx.config;
  const lane = new HeavyLane(alertPreviewConcurrency, alertPreviewTimeoutMs, 'alert previews');
  app.post(
    '/alerts/preview',
    {
      // Writes nothing: a read key may preview (src/auth/scopes.ts).
      config: { scope: 'read' },
      schema: {
        operationId: 'previewAlert',
        summary: 'Preview an alert rule over stored prices',
        description:
          'Runs a rule body (as for `POST /alerts`) over the observations stored between `from` (inclusive) and `to` ' +
          `(exclusive, at most ${PREVIEW_MAX_DAYS} days later), from a fresh state, with the same semantics as live ` +
          'evaluation, and answers the alert events it would have created (`id` and `alert_id` null, `created_at` the ' +
          "firing observation's time). Writes nothing. `not_cheapest` and `listing_failing` cannot be previewed (422). " +
          'A preview stops at its time limit and says so (`complete: false`, `through`); it stops when the client goes away; ' +
          'a process runs a few at once, one per account, and answers 503 with `Retry-After` when the others took too long. ' +
          'See docs/alerts/firing.md.',
        tags: ['Alerts'],
        body: AlertPreviewSchema,
        response: {
          200: withHeaders(AlertPreviewResultSchema, 'The events the rule would have fired, oldest first'),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const signal = clientGone(reply);
      const account = request.principal.accountId;
      const progress = { observations: 0 };
      try {
        return await lane.run(
          account,
          () =>
            previewAlert(app.ctx.db, account, request.body, { timeLimitMs: alertPreviewTimeoutMs, signal, progress }),
          signal,
        );
      } catch (err) {
        if (!signal.aborted) throw err;
        // Nobody is left to answer: the work stopped where it was.
        request.log.info({ observations_read: progress.observations }, 'alert preview stopped: the client went away');
        throw ERRORS.invalidRequest('The client went away before the preview was answered');
      }
    },
  );
};
