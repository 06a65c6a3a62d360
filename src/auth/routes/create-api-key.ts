import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, locationHeader, withHeaders } from '../../http/schemas.js';
import { ApiKeyCreateSchema, ApiKeyWithSecretSchema } from '../schemas.js';
import { createAccountKey, toApiKey } from '../service.js';

export const createApiKeyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/keys',
    {
      config: { idempotent: true, managesKeys: true },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key (its secret shown once)',
        description:
          "A new key of the calling key's account. `scope` is `full` (default) or `read`; `plan` is at most the calling " +
          "key's plan (free < starter < business) and defaults to it: a higher one is a 403 `insufficient_scope` naming " +
          '`plan`. The answer holds the key itself as `secret`, this once: only its hash is stored, so it cannot be shown ' +
          'again. Send an `Idempotency-Key` to make retries safe (a replay answers the same secret, from a sealed store). ' +
          'Only full keys manage keys.',
        tags: ['Keys'],
        body: ApiKeyCreateSchema,
        response: {
          201: withHeaders(ApiKeyWithSecretSchema, 'The created key, with its secret', locationHeader),
          ...errorResponses(413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const row = await createAccountKey(app.ctx.db, request.principal, request.body);
      const base = request.url.startsWith('/api/') ? '/api/v1' : '/v1';
      return reply
        .code(201)
        .header('Location', `${base}/keys/${row.id}`)
        .send({ ...toApiKey(row), secret: row.key });
    },
  );
};
