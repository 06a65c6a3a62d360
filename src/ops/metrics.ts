import type { FastifyInstance } from 'fastify';
import client from 'prom-client';
import type { RateLimiter } from '../ratelimit/service.js';
import { getMetricsRoute } from './routes/get-metrics.js';

/**
 * Prometheus metrics at /metrics: request counts and latency histograms by method, route
 * pattern and status, plus Node's default process metrics, and with Redis the rate limiter's
 * round trips against requests counted from leased blocks. One registry per app instance, so
 * tests that build several apps in a process do not collide.
 */
export function registerMetrics(app: FastifyInstance, limiter?: RateLimiter) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'pricehound_' });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new client.Counter({
    name: 'pricehound_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'pricehound_http_request_duration_seconds',
    help: 'Time from request start to response end, by method, route pattern and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const stats = limiter?.stats;
  if (stats) {
    const counterOf = (name: string, help: string, read: () => number) => {
      let seen = 0;
      return new client.Counter({
        name,
        help,
        registers: [registry],
        collect() {
          const now = read();
          this.inc(now - seen);
          seen = now;
        },
      });
    };
    counterOf(
      'pricehound_ratelimit_redis_calls_total',
      'Script calls the rate limiter made to Redis (each counts a batch of requests)',
      () => stats.redisCalls,
    );
    counterOf(
      'pricehound_ratelimit_leased_counts_total',
      'Requests counted from a block of counts leased from Redis, without a round trip (src/ratelimit/quota-leases.ts)',
      () => stats.leasedCounts,
    );
  }

  // The labelled children, looked up by method, route and status in nested maps whose keys are
  // the same strings every time, which costs less than prom-client's hashing of a labels object
  // and less than building a key. The set is bounded: unmatched paths share one route label, so
  // scanners cannot blow up the series count.
  type Series = { counter: client.Counter.Internal; histogram: client.Histogram.Internal<string> };
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const seriesOf = (method: string, route: string, status: number): Series => {
    let byRoute = series.get(method);
    if (!byRoute) series.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      const values = [method, route, String(status)];
      s = { counter: requests.labels(...values), histogram: duration.labels(...values) };
      byStatus.set(status, s);
    }
    return s;
  };
  app.addHook('onResponse', (request, reply, done) => {
    const s = seriesOf(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    s.counter.inc();
    s.histogram.observe(reply.elapsedTime / 1000);
    done();
  });

  getMetricsRoute(app, registry);
  return registry;
}
