import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

const Status = Type.Object(
  { status: Type.String({ enum: ['ok'] }), database: Type.Optional(Type.String({ enum: ['pglite', 'postgres'] })) },
  { additionalProperties: false },
);

/** Liveness, without auth, for load balancers and orchestrators. */
export function getHealthRoute(app: FastifyInstance) {
  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        description: 'Answers 200 while the process runs, without touching the database. No API key needed.',
        tags: ['Operations'],
        security: [],
        response: { 200: { ...Status, description: 'The process is up' } },
      },
    },
    async () => ({ status: 'ok' }),
  );
}
