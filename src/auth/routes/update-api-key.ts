import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { ApiKeyIdParams, ApiKeySchema, ApiKeyUpdateSchema } from '../schemas.js';
import { renameKey, toApiKey } from '../service.js';

/** PATCH only: a key's name is all that can change (design/API.md "API keys over HTTP"). */
export const updateApiKeyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.patch(
    '/keys/:id',
    {
      config: { managesKeys: true },
      schema: {
        operationId: 'updateApiKey',
        summary: 'Rename an API key',
        description:
          "Only `name` changes (`null` clears it); a key's scope and plan are those it was made with: make a new key " +
          'and revoke this one to change them. An empty body changes nothing. Only full keys manage keys.',
        tags: ['Keys'],
        params: ApiKeyIdParams,
        body: ApiKeyUpdateSchema,
        response: { 200: withHeaders(ApiKeySchema, 'The renamed key'), ...errorResponses(404, 413, 415, 422) },
      },
    },
    async (request) => {
      const [row, lastUsed] = await app.ctx.usage.withLastUse(() =>
        renameKey(app.ctx.db, request.principal.accountId, request.params.id, request.body.name),
      );
      return toApiKey(row, lastUsed);
    },
  );
};
