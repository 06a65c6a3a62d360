import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

/** GET /metrics: what `registry` collected, in the Prometheus text format (ops/metrics.ts fills it). */
export function getMetricsRoute(app: FastifyInstance, registry: Registry) {
  app.get(
    '/metrics',
    {
      logLevel: 'warn',
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          'Request counts and latency histograms by method, route pattern and status, plus process metrics, in the ' +
          'Prometheus text format. No API key needed: expose it only where your Prometheus can reach it.',
        tags: ['Operations'],
        produces: ['text/plain'],
        security: [],
        response: { 200: { type: 'string', maxLength: 10_000_000, description: 'Prometheus text exposition format' } },
      },
    },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
}
