import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { UNSUBSCRIBE_PATH, unsubscribe } from '../service.js';
import { emailContext } from './context.js';
import { answer, unsubscribeSchema } from './unsubscribe-answer.js';

/** RFC 8058 one-click unsubscribe: the mail client POSTs the link (`List-Unsubscribe=One-Click`). */
export const unsubscribeEmailOneClickRoute: FastifyPluginAsyncTypebox = async (app) => {
  // RFC 8058's POST is a form body; what it says is fixed, so it is read and ignored.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 1024 },
    (_req, _body, done) => done(null, undefined),
  );
  app.post(UNSUBSCRIBE_PATH, {
    schema: {
      operationId: 'unsubscribeEmailOneClick',
      summary: 'One-click unsubscribe (RFC 8058, no API key)',
      ...unsubscribeSchema,
    },
    handler: async (request, reply) => answer(request, reply, () => unsubscribe(emailContext(app), request.query.s)),
  });
};
