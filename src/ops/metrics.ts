import type { FastifyInstance } from 'fastify';
import client from 'prom-client';
import type { RateLimiter } from '../ratelimit/service.js';
import { routeOf } from '../http/route-options.js';
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
  const http = new HttpMetrics();
  registry.registerMetric(http.requests as unknown as client.Metric);
  registry.registerMetric(http.duration as unknown as client.Metric);

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

  app.addHook('onResponse', (request, reply, done) => {
    http.observe(request.method, routeOf(request).url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  getMetricsRoute(app, registry);
  return registry;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: { method: string; route: string; status_code: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), by BUCKETS index. */
  buckets: number[];
}

/** One value of a metric as prom-client's registry formats it (its counters and histograms answer these). */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Record<string, string>;
}

/**
 * The request counter and latency histogram by method, route pattern and status, counted in
 * plain fields on the request path and handed to the registry only when /metrics is read, in the
 * shape prom-client's own Counter and Histogram give it, so the text is the same as theirs
 * (test/ops/ops.test.ts). prom-client's labelled children hashed the label values, validated them
 * and looked up the bucket by a number-keyed object on every request (docs/BENCHMARKS.md,
 * issue 26).
 *
 * The series are looked up in nested maps whose keys are the same strings every time. The set
 * is bounded: unmatched paths share one route label, so scanners cannot blow up the series count.
 */
class HttpMetrics {
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  /** Every series, in the order of its first request (the order prom-client listed them in). */
  private all: Series[] = [];

  readonly requests = {
    name: 'pricehound_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    type: 'counter',
    aggregator: 'sum',
    get: () => ({
      ...this.requests,
      values: this.all.map((s): Sample => ({ labels: s.labels, value: s.count })),
    }),
    reset: () => this.reset(),
  };

  readonly duration = {
    name: 'pricehound_http_request_duration_seconds',
    help: 'Time from request start to response end, by method, route pattern and status',
    type: 'histogram',
    aggregator: 'sum',
    get: () => ({ ...this.duration, values: this.all.flatMap((s) => this.histogramOf(s)) }),
    reset: () => this.reset(),
  };

  observe(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.series.get(method);
    if (!byRoute) this.series.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      s = { labels: { method, route, status_code: String(status) }, count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      byStatus.set(status, s);
      this.all.push(s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (seconds <= BUCKETS[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
  }

  private reset(): void {
    this.series.clear();
    this.all = [];
  }

  private histogramOf(s: Series): Sample[] {
    const name = this.duration.name;
    let acc = 0;
    const out: Sample[] = BUCKETS.map((le, i) => {
      acc += s.buckets[i]!;
      return { labels: { le }, value: acc, metricName: `${name}_bucket`, sharedLabels: s.labels };
    });
    out.push(
      { labels: { le: '+Inf' }, value: s.count, metricName: `${name}_bucket`, sharedLabels: s.labels },
      { labels: {}, value: s.sum, metricName: `${name}_sum`, sharedLabels: s.labels },
      { labels: {}, value: s.count, metricName: `${name}_count`, sharedLabels: s.labels },
    );
    return out;
  }
}
