import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { DeliveryListQuerySchema, DeliveryListSchema, WebhookIdParams } from '../schemas.js';
import { findWebhook } from '../service.js';
import { DELIVERY_SORTS, listDeliveries, toDelivery } from '../sql.js';

export const listWebhookDeliveriesRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "List a webhook endpoint's delivery attempts",
        description:
          'One row per attempt, newest first: the event, the attempt number, `pending` until made, then `succeeded` or ' +
          "`failed` with the answer's status, duration and first 1 KB (or `error` when there was no answer), and whether " +
          'it was `scheduled` or a `manual` redelivery. Filter by `status` and `event_id`.',
        tags: ['Webhooks'],
        params: WebhookIdParams,
        querystring: DeliveryListQuerySchema,
        response: { 200: withHeaders(DeliveryListSchema, 'A page of delivery attempts'), ...errorResponses(404, 422) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const hook = await findWebhook(app.ctx.db, accountId, request.params.id);
      const page = pageRequest(request.query, DELIVERY_SORTS, '-created_at');
      return pageOf(await listDeliveries(app.ctx.db, accountId, hook.id, request.query, page), page, toDelivery);
    },
  );
};
