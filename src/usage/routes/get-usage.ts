import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PLAN_NAMES } from '../../auth/service.js';
import { HOUR_MS, hourStart } from '../../time.js';
import { errorResponses, withHeaders } from '../../http/schemas.js';

const Count = Type.Integer({ format: 'int64', minimum: 0, maximum: 1_000_000_000_000 });

const UsageSchema = Type.Object(
  {
    object: Type.Literal('usage'),
    key_id: Type.String({ maxLength: 64, pattern: '^key_[0-9a-z]+$' }),
    account_id: Type.String({ maxLength: 64, pattern: '^acct_[0-9a-z]+$' }),
    plan: Type.String({ enum: PLAN_NAMES }),
    limit: Count,
    used: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: 1_000_000_000_000,
      description: 'Requests counted in the current hour',
    }),
    remaining: Count,
    reset: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: 99_999_999_999,
      description: 'Unix seconds when the hour ends',
    }),
    history: Type.Array(
      Type.Object(
        {
          hour: Type.String({ format: 'date-time', maxLength: 40, description: 'Start of the UTC hour' }),
          requests: Type.Integer({
            format: 'int64',
            minimum: 0,
            maximum: 1_000_000_000_000,
            description: 'Requests served within the limit',
          }),
          rejected: Type.Integer({
            format: 'int64',
            minimum: 0,
            maximum: 1_000_000_000_000,
            description: 'Requests refused with 429',
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 720, description: 'Hours with traffic, newest first' },
    ),
  },
  { title: 'Usage', additionalProperties: false },
);

const UsageQuery = Type.Object(
  {
    hours: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: 720,
        default: 24,
        description: 'How many hours of history',
      }),
    ),
  },
  { additionalProperties: false },
);

/** GET /usage: the key's plan, its current window and hourly history. Not counted against the limit. */
export const getUsageRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/usage',
    {
      config: { countsTowardLimit: false },
      schema: {
        operationId: 'getUsage',
        summary: 'Rate-limit usage of the calling key',
        description:
          'Does not count against the hourly limit, and is answered even when the limit is used up. ' +
          'Each API process writes its counts every few seconds; with several processes the last seconds ' +
          'of the others may be missing from `history` (never from `used`).',
        tags: ['Usage'],
        querystring: UsageQuery,
        response: { 200: withHeaders(UsageSchema, 'Usage of the key'), ...errorResponses(422) },
      },
    },
    async (request, reply) => {
      const p = request.principal;
      const hours = request.query.hours ?? 24;
      const limit = Number(reply.getHeader('x-ratelimit-limit'));
      const remaining = Number(reply.getHeader('x-ratelimit-remaining'));
      const reset = Number(reply.getHeader('x-ratelimit-reset'));
      const since = new Date(hourStart(app.ctx.clock.now()) - (hours - 1) * HOUR_MS);
      const history = await app.ctx.usage.history(p.keyId, since);
      return {
        object: 'usage' as const,
        key_id: p.keyId,
        account_id: p.accountId,
        plan: p.plan,
        limit,
        used: limit - remaining,
        remaining,
        reset,
        history: history.map((h) => ({ hour: h.hour.toISOString(), requests: h.requests, rejected: h.rejected })),
      };
    },
  );
};
