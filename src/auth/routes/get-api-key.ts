import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ApiKeyIdParams, ApiKeySchema } from '../schemas.js';
import { findAccountKey, toApiKey } from '../service.js';

export const getApiKeyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/keys/:id',
    {
      config: { scope: 'full', managesKeys: true },
      schema: {
        operationId: 'getApiKey',
        summary: 'Get an API key',
        description:
          "A key of the calling account, without its secret; another account's key is a 404. Only full keys manage keys.",
        tags: ['Keys'],
        params: ApiKeyIdParams,
        response: { 200: withHeaders(ApiKeySchema, 'The key'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const [row, lastUsed] = await app.ctx.usage.withLastUse(() =>
        findAccountKey(app.ctx.db, request.principal.accountId, request.params.id),
      );
      return toApiKey(row, lastUsed);
    },
  );
};
