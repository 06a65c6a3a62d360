import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { AlertMatchesSchema, AlertMatchQuerySchema, MATCHES_MAX, matchAlert } from '../matches.js';

export const matchAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
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
          'See docs/alerts/firing.md, "What already holds".',
        tags: ['Alerts'],
        body: AlertMatchQuerySchema,
        response: {
          200: withHeaders(AlertMatchesSchema, 'The subjects that meet the condition now'),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request) => matchAlert(app.ctx.db, request.principal.accountId, request.body),
  );
};
