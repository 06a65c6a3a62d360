import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { clientGone } from '../../http/client-gone.js';
import { HeavyLane } from '../../http/heavy-lane.js';
import { ERRORS } from '../../http/errors.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertMatchesSchema, AlertMatchQuerySchema, MATCHES_MAX, matchAlert } from '../matches.js';

export const matchAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  // A whole account's series can take seconds to judge: bounded as previews are, in a lane of
  // its own (the dashboard asks for matches as the form changes, previews on a button).
  const { alertPreviewConcurrency, alertPreviewTimeoutMs } = app.ctx.config;
  const lane = new HeavyLane(alertPreviewConcurrency, alertPreviewTimeoutMs, 'alert match requests');
  app.post(
    '/alerts/matches',
    {
      // Writes nothing: a read key may ask, as it may preview (src/auth/scopes.ts).
      config: { scope: 'read' },
      schema: {
        operationId: 'matchAlert',
        summary: "Which series already meet an alert rule's condition",
        description:
          'Takes a rule body (as for `POST /alerts`, without `fire_existing`; `enabled` is ignored) and answers the ' +
          'subjects of its scope on which its condition holds now: price series judged on their latest observation ' +
          "(change conditions against the observation before it), `not_cheapest` on the product's rank now, " +
          "`listing_failing` on the listing's failures in a row. These are what `fire_existing` fires (true) or takes in " +
          `silently (false) when the rule is saved. At most ${MATCHES_MAX} items, \`count\` all of them. Writes nothing. ` +
          'A process runs a few at once, one per account, and answers 503 with `Retry-After` when the others took too ' +
          'long (as for previews). See docs/alerts/firing.md, "What already holds".',
        tags: ['Alerts'],
        body: AlertMatchQuerySchema,
        response: {
          200: withHeaders(AlertMatchesSchema, 'The subjects that meet the condition now'),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const signal = clientGone(reply);
      const account = request.principal.accountId;
      try {
        return await lane.run(account, () => matchAlert(app.ctx.db, account, request.body), signal);
      } catch (err) {
        if (!signal.aborted) throw err;
        throw ERRORS.invalidRequest('The client went away before the matches were answered');
      }
    },
  );
};
