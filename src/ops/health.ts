import type { FastifyInstance } from 'fastify';
import { getHealthRoute } from './routes/get-health.js';
import { getReadinessRoute } from './routes/get-readiness.js';

/** Liveness and readiness, without auth, for load balancers and orchestrators. */
export function registerHealth(app: FastifyInstance) {
  getHealthRoute(app);
  getReadinessRoute(app);
}
