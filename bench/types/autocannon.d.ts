// The subset of autocannon's programmatic API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface Client extends EventEmitter {
    setRequests(requests: Request[]): void;
    setHeaders(headers: Record<string, string>): void;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    overallRate?: number;
    connectionRate?: number;
    headers?: Record<string, string>;
    requests?: Request[];
    setupClient?: (client: Client) => void;
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Result {
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    latency: Histogram;
    requests: Histogram & { total: number };
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
    on(
      event: 'response',
      listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void,
    ): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
