import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { AlertCreateSchema, AlertSchema } from '../schemas.js';
import { createAlert } from '../service.js';
import { toAlert } from '../sql.js';

export const createAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/alerts',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createAlert',
        summary: 'Create an alert rule',
        description:
          '`name` and `condition` are required; every other field has a default. Scope ids must be in the account ' +
          '(422 naming the field otherwise); a `listing_id` fills in its product and competitor. ' +
          'The series that already meet the condition (`POST /alerts/matches`) fire now with `fire_existing: true`; ' +
          'by default they are taken in silently and fire once they have cleared and meet it again. ' +
          'Send an `Idempotency-Key` to make retries safe. See docs/ALERTS.md.',
        tags: ['Alerts'],
        body: AlertCreateSchema,
        response: {
          201: withHeaders(AlertSchema, 'The created rule', locationHeader),
          ...errorResponses(409, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createAlert(app.ctx.db, request.principal.accountId, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply.code(201).header('Location', `${base}/alerts/${row.id}`).send(toAlert(row));
    },
  );
};
