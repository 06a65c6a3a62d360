/**
 * The HTTP fetcher: undici over one pooled keep-alive Agent whose every connection passes the
 * address guard. Rules (docs/FETCHING.md):
 * - the URL's host, every redirect hop's host and a proxy's host are checked by the guard
 *   before anything is sent, and sockets connect only to addresses the guard approved;
 * - robots.txt is honoured unless the request opts out (per origin, cached; see robots.ts);
 * - per host: at most FETCH_DOMAIN_CONCURRENCY requests in flight, starts FETCH_DOMAIN_DELAY_MS
 *   apart, and nothing before a 429/503's Retry-After has passed;
 * - FETCH_TIMEOUT_MS for the whole fetch (all hops, headers and body), counted from its first
 *   request's start; FETCH_MAX_BYTES on the decompressed body (Content-Length checked first);
 *   at most FETCH_MAX_REDIRECTS redirects, http and https only;
 * - gzip, deflate and br decoded; the charset from a BOM, Content-Type, or the document;
 * - every failure is a FetchError whose message is meant for the user who set up the listing.
 */
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher, ProxyAgent } from 'undici';
import type { Config } from '../config.js';
import { AddressGuard, addressPolicy, type LookupAll } from './address-guard.js';
import { createGuardedAgent, createGuardedProxyAgent } from './agent.js';
import {
  ACCEPT_ENCODING,
  collect,
  contentKind,
  decodeText,
  decompress,
  looksBinary,
  mimeType,
  parseContentEncoding,
  tooLarge,
} from './body.js';
import { DomainLimiter } from './domain-limiter.js';
import { retryAfterNote, retryAfterPause } from './retry-after.js';
import { RobotsCache, type RobotsResponse } from './robots.js';
import { FetchError, type FetchRequest, type FetchResult, type Fetcher } from './types.js';
import { acceptPageUrl, isFetchedScheme, shortUrl, urlPort } from './url-policy.js';

export type HttpFetcherConfig = Pick<
  Config,
  | 'allowLoopbackTargets'
  | 'allowTargets'
  | 'userAgent'
  | 'fetchTimeoutMs'
  | 'fetchMaxBytes'
  | 'fetchMaxRedirects'
  | 'fetchDomainConcurrency'
  | 'fetchDomainDelayMs'
>;

export interface HttpFetcherOptions {
  /** Share one guard (and its resolution cache) with other fetchers; default: a new one. */
  guard?: AddressGuard;
  /** Resolver for a new guard (tests map names to addresses without DNS traffic). */
  lookup?: LookupAll;
  /** The robots.txt product token (default "pricehound"). */
  robotsToken?: string;
  /** robots.txt cache lifetime, and of "unreachable: disallow" verdicts, in ms (1 h, 60 s). */
  robotsTtlMs?: number;
  robotsFailureTtlMs?: number;
  /** Longest a fetch waits for its turn at a host, in ms (default 60 s). */
  maxQueueWaitMs?: number;
  /** Pause of a host after a 429 without Retry-After, in ms (default 60 s). */
  defaultRetryAfterMs?: number;
  /** Longest Retry-After honoured, in ms (default MAX_RETRY_AFTER_MS, 6 h). */
  maxRetryAfterMs?: number;
  /** TCP + TLS connect timeout, in ms (default min(10 s, FETCH_TIMEOUT_MS)). */
  connectTimeoutMs?: number;
  /** Accept-Language sent with page requests. */
  acceptLanguage?: string;
  /** Observe every request about to be sent (after the guard approved its host). */
  onRequest?: (e: { url: string; purpose: 'page' | 'robots'; proxied: boolean }) => void;
}

export interface HttpFetcher extends Fetcher {
  readonly guard: AddressGuard;
  readonly limiter: DomainLimiter;
  /** The robots.txt check fetches use (for the browser fetcher): throws FetchError when forbidden. */
  checkRobots(url: string, signal?: AbortSignal, proxyUrl?: string | null): Promise<void>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ROBOTS_MAX_BYTES = 512 * 1024;
const MAX_PROXY_AGENTS = 32;

interface RawResponse {
  finalUrl: URL;
  status: number;
  contentType: string | null;
  buffer: Buffer;
  redirects: string[];
}

interface FetchUrlOptions {
  purpose: 'page' | 'robots';
  proxyUrl: string | null | undefined;
  respectRobots: boolean;
  signal: AbortSignal | undefined;
  maxBytes: number;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function statusText(status: number): string {
  const t = STATUS_CODES[status];
  return t ? `${status} ${t}` : String(status);
}

class TimeoutSignal extends Error {}

class HttpFetcherImpl implements HttpFetcher {
  readonly guard: AddressGuard;
  readonly limiter: DomainLimiter;
  private readonly robots: RobotsCache;
  private readonly agent: Dispatcher;
  private readonly proxies = new Map<string, ProxyAgent>();
  private readonly pageHeaders: Record<string, string>;
  private readonly robotsHeaders: Record<string, string>;
  private readonly connectTimeoutMs: number;
  private closed = false;

  constructor(
    private readonly config: HttpFetcherConfig,
    private readonly opts: HttpFetcherOptions,
  ) {
    this.guard = opts.guard ?? new AddressGuard({ ...addressPolicy(config), lookup: opts.lookup });
    this.limiter = new DomainLimiter({
      concurrency: config.fetchDomainConcurrency,
      delayMs: config.fetchDomainDelayMs,
      maxWaitMs: opts.maxQueueWaitMs,
    });
    this.connectTimeoutMs = opts.connectTimeoutMs ?? Math.min(10_000, config.fetchTimeoutMs);
    this.agent = createGuardedAgent(this.guard, {
      timeoutMs: this.connectTimeoutMs,
      headersTimeout: config.fetchTimeoutMs,
      bodyTimeout: config.fetchTimeoutMs,
    });
    this.pageHeaders = {
      'user-agent': config.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': opts.acceptLanguage ?? 'en-US,en;q=0.9,*;q=0.5',
      'accept-encoding': ACCEPT_ENCODING,
    };
    this.robotsHeaders = {
      'user-agent': config.userAgent,
      accept: 'text/plain,*/*;q=0.5',
      'accept-encoding': ACCEPT_ENCODING,
    };
    this.robots = new RobotsCache({
      token: opts.robotsToken ?? 'pricehound',
      ttlMs: opts.robotsTtlMs,
      failureTtlMs: opts.robotsFailureTtlMs,
      fetchRobots: (u, proxyUrl) => this.fetchRobots(u, proxyUrl),
      onCrawlDelay: (host, ms) => this.limiter.setMinDelay(host, ms),
    });
  }

  async fetch(req: FetchRequest): Promise<FetchResult> {
    const t0 = performance.now();
    if (this.closed) throw new FetchError('network', 'the fetcher has been closed');
    const url = requestUrl(req.url);
    if (req.respectRobots) {
      // The guard first: a refused address fails without even a robots.txt request.
      await this.preflight(url, req.proxyUrl);
      await this.robots.check(url, req.signal, req.proxyUrl);
    }
    const raw = await this.fetchUrl(url, {
      purpose: 'page',
      proxyUrl: req.proxyUrl,
      respectRobots: req.respectRobots,
      signal: req.signal,
      maxBytes: this.config.fetchMaxBytes,
    });
    const { text, charset } = decodeText(raw.buffer, raw.contentType);
    return {
      url: req.url,
      finalUrl: raw.finalUrl.href,
      status: raw.status,
      contentType: raw.contentType,
      body: text,
      bytes: raw.buffer.length,
      redirects: raw.redirects,
      ms: Math.round(performance.now() - t0),
      charset,
    };
  }

  async checkRobots(url: string, signal?: AbortSignal, proxyUrl?: string | null): Promise<void> {
    const u = requestUrl(url);
    await this.preflight(u, proxyUrl);
    await this.robots.check(u, signal, proxyUrl);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.limiter.close();
    const closing = [this.agent.destroy(), ...[...this.proxies.values()].map((p) => p.destroy())];
    this.proxies.clear();
    await Promise.allSettled(closing);
  }

  /** The guard's verdict on a URL's host (and the proxy's host) before anything is sent. */
  private async preflight(url: URL, proxyUrl: string | null | undefined): Promise<void> {
    if (proxyUrl) {
      const proxy = parseProxyUrl(proxyUrl);
      try {
        await this.guard.resolve(proxy.hostname, urlPort(proxy));
      } catch (err) {
        if (err instanceof FetchError)
          throw new FetchError(err.code, `proxy ${proxy.host}: ${err.message}`, undefined, { cause: err });
        throw err;
      }
    }
    await this.guard.resolve(url.hostname, urlPort(url));
  }

  private async preflightHop(url: URL, proxyUrl: string | null | undefined): Promise<void> {
    try {
      await this.preflight(url, proxyUrl);
    } catch (err) {
      if (err instanceof FetchError && (err.code === 'blocked_address' || err.code === 'dns_failed')) {
        throw new FetchError(err.code, `the page redirects to ${shortUrl(url.href)}, but ${err.message}`, undefined, {
          cause: err,
        });
      }
      throw err;
    }
  }

  private dispatcherFor(proxyUrl: string | null | undefined): Dispatcher {
    if (!proxyUrl) return this.agent;
    let p = this.proxies.get(proxyUrl);
    if (p) {
      // Keep the map in least-recently-used order.
      this.proxies.delete(proxyUrl);
      this.proxies.set(proxyUrl, p);
      return p;
    }
    parseProxyUrl(proxyUrl);
    if (this.proxies.size >= MAX_PROXY_AGENTS) {
      const [oldUrl, old] = this.proxies.entries().next().value as [string, ProxyAgent];
      this.proxies.delete(oldUrl);
      void old.close().catch(() => undefined);
    }
    p = createGuardedProxyAgent(proxyUrl, this.guard, {
      timeoutMs: this.connectTimeoutMs,
      headersTimeout: this.config.fetchTimeoutMs,
      bodyTimeout: this.config.fetchTimeoutMs,
    });
    this.proxies.set(proxyUrl, p);
    return p;
  }

  private async fetchRobots(robotsUrl: URL, proxyUrl: string | null | undefined): Promise<RobotsResponse> {
    try {
      const raw = await this.fetchUrl(robotsUrl, {
        purpose: 'robots',
        proxyUrl,
        respectRobots: false,
        signal: undefined,
        maxBytes: ROBOTS_MAX_BYTES,
      });
      if (raw.status >= 400) return { status: raw.status, body: '' };
      return { status: raw.status, body: decodeText(raw.buffer, 'text/plain').text };
    } catch (err) {
      if (err instanceof FetchError) {
        // A robots.txt beyond the cap (only when compressed; plain ones are cut at the cap):
        // treated as unreadable rules, i.e. no restriction, like an unavailable file.
        if (err.code === 'too_large') return { status: 200, body: '' };
        return { error: err };
      }
      throw err;
    }
  }

  /** Fetch `start`, following redirects, within the limits; returns the final response's bytes. */
  private async fetchUrl(start: URL, o: FetchUrlOptions): Promise<RawResponse> {
    const caller = o.signal;
    caller?.throwIfAborted();
    const ac = new AbortController();
    const signal = ac.signal;
    const onCallerAbort = (): void => ac.abort(caller!.reason);
    caller?.addEventListener('abort', onCallerAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.config.fetchTimeoutMs;
    const dispatcher = this.dispatcherFor(o.proxyUrl);
    const visited = [start.href];
    let current = start;
    try {
      for (let hop = 0; ; hop++) {
        if (hop === 0) await this.preflight(current, o.proxyUrl);
        else await this.preflightHop(current, o.proxyUrl);
        if (hop > 0 && o.respectRobots) await this.robots.check(current, signal, o.proxyUrl);
        const release = await this.limiter.acquire(current.hostname, signal);
        try {
          if (!timer) {
            timer = setTimeout(() => ac.abort(new TimeoutSignal()), timeoutMs);
            timer.unref();
          }
          this.opts.onRequest?.({ url: current.href, purpose: o.purpose, proxied: Boolean(o.proxyUrl) });
          this.limiter.markStarted(current.hostname);
          const res = await dispatcher.request({
            origin: current.origin,
            path: current.pathname + current.search,
            method: 'GET',
            headers: { ...(o.purpose === 'page' ? this.pageHeaders : this.robotsHeaders) },
            signal,
          });
          const status = res.statusCode;
          const retryAfterMs = this.noteRetryAfter(current.hostname, status, header(res.headers['retry-after']));

          const location = REDIRECTS.has(status) ? header(res.headers.location) : undefined;
          if (location !== undefined) {
            discard(res.body);
            current = this.nextHop(current, location, visited);
            continue;
          }
          if (status >= 300 && o.purpose === 'page') {
            discard(res.body);
            const why = status < 400 ? `${statusText(status)} without a redirect target` : statusText(status);
            throw new FetchError(
              'http_error',
              `the page answered ${why}${retryAfterNote(retryAfterMs)}`,
              status,
              retryAfterMs !== undefined ? { retryAfterMs } : undefined,
            );
          }
          if (status >= 300) {
            discard(res.body);
            return {
              finalUrl: current,
              status,
              contentType: null,
              buffer: Buffer.alloc(0),
              redirects: visited.slice(1),
            };
          }

          const contentType = header(res.headers['content-type']) ?? null;
          const kind = contentKind(contentType);
          if (o.purpose === 'page' && kind === 'binary') {
            discard(res.body);
            throw new FetchError('unsupported_content', `the address serves ${mimeType(contentType)}, not a web page`);
          }
          const length = Number(header(res.headers['content-length']));
          const truncate = o.purpose === 'robots';
          if (!truncate && length > o.maxBytes) {
            discard(res.body);
            throw tooLarge(o.maxBytes);
          }
          const codings = parseContentEncoding(res.headers['content-encoding']);
          let { buffer } = await collect(res.body, o.maxBytes, truncate && codings.length === 0);
          if (codings.length > 0) buffer = await decompress(buffer, codings, o.maxBytes);
          if (o.purpose === 'page' && kind === 'unknown' && looksBinary(buffer)) {
            throw new FetchError(
              'unsupported_content',
              `the address serves binary data${contentType ? ` (${mimeType(contentType)})` : ''}, not a web page`,
            );
          }
          return { finalUrl: current, status, contentType, buffer, redirects: visited.slice(1) };
        } finally {
          release();
        }
      }
    } catch (err) {
      if (signal.aborted && signal.reason instanceof TimeoutSignal) {
        throw new FetchError(
          'timeout',
          `${o.purpose === 'robots' ? 'robots.txt' : 'the page'} did not load within ${formatSeconds(timeoutMs)} (FETCH_TIMEOUT_MS)`,
          undefined,
          { cause: err },
        );
      }
      if (caller?.aborted) throw caller.reason;
      throw this.mapError(err, current, Boolean(o.proxyUrl));
    } finally {
      if (timer) clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    }
  }

  private nextHop(current: URL, location: string, visited: string[]): URL {
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new FetchError('invalid_url', `the page redirects to an invalid address (${shortUrl(location)})`);
    }
    if (!isFetchedScheme(next.protocol)) {
      throw new FetchError(
        'invalid_url',
        `the page redirects to ${shortUrl(next.href)}; only http and https addresses are fetched`,
      );
    }
    next.hash = '';
    const seenAt = visited.indexOf(next.href);
    if (seenAt >= 0) {
      const loop = [...visited.slice(seenAt), next.href].map(shortUrl).join(' → ');
      throw new FetchError('too_many_redirects', `the page redirects in a loop: ${loop}`);
    }
    visited.push(next.href);
    if (visited.length - 1 > this.config.fetchMaxRedirects) {
      throw new FetchError(
        'too_many_redirects',
        `the page redirected more than ${this.config.fetchMaxRedirects} times (FETCH_MAX_REDIRECTS); last to ${shortUrl(next.href)}`,
      );
    }
    return next;
  }

  /** A 429/503 pauses the host (Retry-After, or a default for 429). Returns the pause in ms. */
  private noteRetryAfter(host: string, status: number, value: string | undefined): number | undefined {
    const ms = retryAfterPause(status, value, {
      missing429Ms: this.opts.defaultRetryAfterMs ?? 60_000,
      maxMs: this.opts.maxRetryAfterMs,
    });
    if (ms !== undefined && ms > 0) this.limiter.pause(host, ms, status);
    return ms;
  }

  private mapError(err: unknown, url: URL, proxied: boolean): unknown {
    if (err instanceof FetchError) return err;
    if (this.closed) return new FetchError('network', 'the fetcher has been closed', undefined, { cause: err });
    if (!(err instanceof Error)) return err;
    const e = err as NodeJS.ErrnoException & { errors?: Array<NodeJS.ErrnoException> };
    const code = e.code ?? e.errors?.[0]?.code ?? '';
    const host = url.host;
    const via = proxied ? ' (through the proxy)' : '';
    const opts = { cause: err };
    if (/Proxy response \((\d+)\)/.test(e.message)) {
      const status = Number(/Proxy response \((\d+)\)/.exec(e.message)![1]);
      return new FetchError(
        'network',
        `the proxy refused to connect to ${host} (${statusText(status)})`,
        undefined,
        opts,
      );
    }
    if (/Proxy Authentication Required/.test(e.message)) {
      return new FetchError(
        'network',
        'the proxy asks for credentials (407 Proxy Authentication Required)',
        undefined,
        opts,
      );
    }
    switch (code) {
      case 'UND_ERR_CONNECT_TIMEOUT':
        return new FetchError(
          'timeout',
          `could not connect to ${host}${via} within ${formatSeconds(this.connectTimeoutMs)}`,
          undefined,
          opts,
        );
      case 'UND_ERR_HEADERS_TIMEOUT':
      case 'UND_ERR_BODY_TIMEOUT':
        return new FetchError('timeout', `${host} stopped answering${via}`, undefined, opts);
      case 'ECONNREFUSED':
        return new FetchError(
          'network',
          `${proxied ? 'the proxy' : host} refused the connection (ECONNREFUSED)`,
          undefined,
          opts,
        );
      case 'ECONNRESET':
      case 'EPIPE':
      case 'UND_ERR_SOCKET':
      case 'UND_ERR_CLOSED':
        return new FetchError('network', `${host} closed the connection unexpectedly${via}`, undefined, opts);
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EAI_FAIL':
      case 'ENODATA':
        return new FetchError('dns_failed', `${url.hostname} does not resolve`, undefined, opts);
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
      case 'ENETDOWN':
      case 'EHOSTDOWN':
        return new FetchError('network', `${host} is unreachable (${code})${via}`, undefined, opts);
      case 'ETIMEDOUT':
        return new FetchError('timeout', `could not connect to ${host}${via} (ETIMEDOUT)`, undefined, opts);
      case 'UND_ERR_DESTROYED':
      case 'UND_ERR_CLOSED_CLIENT':
        return new FetchError('network', 'the fetcher has been closed', undefined, opts);
    }
    if (
      /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code) ||
      /certificate|SSL|TLS/i.test(e.message)
    ) {
      return new FetchError('network', `secure connection to ${host} failed: ${e.message}`, undefined, opts);
    }
    if (code.startsWith('HPE_') || code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_RESPONSE_STATUS_CODE') {
      return new FetchError('network', `${host} sent an invalid HTTP response`, undefined, opts);
    }
    return new FetchError('network', `could not fetch from ${host}${via}: ${e.message}`, undefined, opts);
  }
}

/** Drop a body we will not read: small rests are drained (the connection stays reusable), big ones cut. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.dump({ limit: 64 * 1024 }).catch(() => undefined);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** A page URL the policy accepts, without its fragment (which is never sent). */
function requestUrl(raw: string): URL {
  const u = acceptPageUrl(raw);
  u.hash = '';
  return u;
}

function parseProxyUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new FetchError('invalid_url', 'the proxy URL is not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new FetchError('invalid_url', `the proxy URL must start with http:// or https://, not ${u.protocol}//`);
  }
  return u;
}

/** The HTTP fetcher. One per process: it holds the connection pool, robots.txt cache and per-host limits. */
export function createHttpFetcher(config: HttpFetcherConfig, opts: HttpFetcherOptions = {}): HttpFetcher {
  return new HttpFetcherImpl(config, opts);
}
