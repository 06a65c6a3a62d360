import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createApiKeyRoute } from './routes/create-api-key.js';
import { getApiKeyRoute } from './routes/get-api-key.js';
import { listApiKeysRoute } from './routes/list-api-keys.js';
import { revokeApiKeyRoute } from './routes/revoke-api-key.js';
import { updateApiKeyRoute } from './routes/update-api-key.js';

/** /keys: the account's API keys, managed by its full keys (design/API.md "API keys over HTTP"). */
export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(listApiKeysRoute);
  await app.register(createApiKeyRoute);
  await app.register(getApiKeyRoute);
  await app.register(updateApiKeyRoute);
  await app.register(revokeApiKeyRoute);
};
