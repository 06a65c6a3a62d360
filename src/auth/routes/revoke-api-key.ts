import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ApiKeyIdParams, ApiKeySchema } from '../schemas.js';
import { revokeKeyOfAccount, toApiKey } from '../service.js';

export const revokeApiKeyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/keys/:id',
    {
      config: { managesKeys: true },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description:
          'The key is refused (401) from the next request on, in every server process; it stays listed with `revoked_at`, ' +
          "and the answer is the revoked key. Revoking a revoked key answers it unchanged. The account's last unrevoked " +
          '`full` key cannot be revoked (409): make another full key first, so that the account is never locked out. ' +
          'A key may revoke itself. Only full keys manage keys.',
        tags: ['Keys'],
        params: ApiKeyIdParams,
        response: { 200: withHeaders(ApiKeySchema, 'The revoked key'), ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const revoked = await revokeKeyOfAccount(
        app.ctx.db,
        app.ctx.keys,
        request.principal.accountId,
        request.params.id,
      );
      // Outside the transaction: the usage writes need not wait for it.
      const [row, lastUsed] = await app.ctx.usage.withLastUse(async () => revoked);
      return toApiKey(row, lastUsed);
    },
  );
};
