import type { FastifyInstance } from 'fastify';
import { OPENAPI_PATH } from '../paths.js';

/** GET /api/v1/openapi.json: the document @fastify/swagger builds from every route's schema, serialised once. */
export function getOpenApiRoute(app: FastifyInstance) {
  let body: string | undefined;
  app.get(
    OPENAPI_PATH,
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getOpenApi',
        summary: 'This OpenAPI 3.1 document',
        description: 'Generated from the same schemas that validate requests; the interactive version is at `/docs`.',
        tags: ['Operations'],
        security: [],
        response: {
          200: {
            type: 'object',
            title: 'OpenApiDocument',
            description: 'An OpenAPI 3.1 document',
            required: ['openapi', 'info', 'paths'],
            properties: { openapi: { type: 'string', maxLength: 20, pattern: '^3\\.1\\.\\d+$' } },
            additionalProperties: true,
          },
        },
      },
    },
    async (_request, reply) => {
      body ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
