import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, withHeaders } from '../../http/schemas.js';
import { pageOf, pageRequest } from '../../pagination/page.js';
import { ApiKeyListQuerySchema, ApiKeyListSchema } from '../schemas.js';
import type { Scope } from '../scopes.js';
import { toApiKey } from '../service.js';
import { KEY_SORTS, listAccountKeys } from '../sql.js';

export const listApiKeysRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/keys',
    {
      // Only full keys manage keys, and listing them is where managing starts (docs/API-DECISIONS.md).
      config: { scope: 'full', managesKeys: true },
      schema: {
        operationId: 'listApiKeys',
        summary: "List the account's API keys",
        description:
          'Every key of the account, revoked ones included (filter with `revoked=false`), newest first; never a secret, ' +
          "only each key's `prefix` to recognise it. Only full keys may list keys: a read key gets 403 `insufficient_scope`.",
        tags: ['Keys'],
        querystring: ApiKeyListQuerySchema,
        response: { 200: withHeaders(ApiKeyListSchema, 'A page of keys'), ...errorResponses(422) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageRequest(q, KEY_SORTS, '-created_at');
      const [rows, lastUsed] = await app.ctx.usage.withLastUse(() =>
        listAccountKeys(
          app.ctx.db,
          request.principal.accountId,
          { scope: q.scope as Scope | undefined, revoked: q.revoked },
          page,
        ),
      );
      return pageOf(rows, page, (r) => toApiKey(r, lastUsed));
    },
  );
};
