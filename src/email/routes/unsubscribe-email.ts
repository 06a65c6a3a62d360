import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UNSUBSCRIBE_PATH, unsubscribe } from '../service.js';
import { emailContext } from './context.js';
import { answer, unsubscribeSchema } from './unsubscribe-answer.js';

/**
 * The link of every mail, clicked (docs/EMAIL.md, "Unsubscribing"): no API key, outside /api/v1;
 * the token is signed and works once. POST (RFC 8058 one-click) is unsubscribe-email-one-click.ts.
 */
export const unsubscribeEmailRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(UNSUBSCRIBE_PATH, {
    schema: {
      operationId: 'unsubscribeEmail',
      summary: 'Unsubscribe with the link of a mail (no API key)',
      ...unsubscribeSchema,
    },
    handler: async (request, reply) => answer(request, reply, () => unsubscribe(emailContext(app), request.query.s)),
  });
};
