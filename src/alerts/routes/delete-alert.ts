import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, NoContent, withHeaders } from '../../http/schemas.js';
import { AlertIdParams } from '../schemas.js';
import { removeAlert } from '../service.js';

export const deleteAlertRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/alerts/:id',
    {
      schema: {
        operationId: 'deleteAlert',
        summary: 'Delete an alert rule',
        description:
          'Removes the rule with its state and the alert events it fired (the events of the `/events` feed stay).',
        tags: ['Alerts'],
        params: AlertIdParams,
        response: { 204: withHeaders(NoContent as never, 'Deleted'), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      await removeAlert(app.ctx.db, request.principal.accountId, request.params.id);
      return reply.code(204).send();
    },
  );
};
