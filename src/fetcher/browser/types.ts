/** What the browser fetcher's users see: its config, options, requests, statistics. */
import type { Config } from '../../config.js';
import type { AddressGuard } from '../address-guard.js';
import type { ProxyEvent } from '../browser-proxy.js';
import type { BrowserAvailability, FetchError, FetchRequest, FetchResult, Fetcher } from '../types.js';

export type BrowserFetcherConfig = Pick<
  Config,
  | 'chromiumPath'
  | 'allowLoopbackTargets'
  | 'allowTargets'
  | 'userAgent'
  | 'fetchTimeoutMs'
  | 'fetchMaxBytes'
  | 'fetchMaxRedirects'
>;

/**
 * Throws FetchError('robots_disallowed') (or another FetchError) when robots.txt forbids `url`;
 * `proxyUrl` is the request's competitor proxy (robots.txt is read through it too). The HTTP
 * fetcher's `checkRobots` has this shape.
 */
export type RobotsCheck = (url: string, signal?: AbortSignal, proxyUrl?: string | null) => Promise<void>;

/**
 * Per-host turns shared with the HTTP fetcher (its DomainLimiter): FETCH_DOMAIN_CONCURRENCY,
 * FETCH_DOMAIN_DELAY_MS, Crawl-delay and Retry-After pauses apply to renders too.
 */
export interface HostLimiter {
  acquire(host: string, signal?: AbortSignal): Promise<() => void>;
  markStarted?(host: string): void;
  pause?(host: string, ms: number, status: number): void;
}

/** One decision of the route handler about a request the page made. */
export interface BrowserRequestEvent {
  url: string;
  resourceType: string;
  navigation: boolean;
  action: 'continue' | 'abort';
  reason?: 'scheme' | 'resource_type' | 'closed' | 'invalid_url' | FetchError['code'];
  message?: string;
}

export interface BrowserFetcherOptions {
  /** The address guard (default: a new one with ALLOW_LOOPBACK_TARGETS). */
  guard?: AddressGuard;
  /** robots.txt check for requests with respectRobots (the HTTP fetcher's). Unset: not checked. */
  robots?: RobotsCheck;
  /** Per-host turns (the HTTP fetcher's limiter). Unset: renders are limited by maxPages only. */
  limiter?: HostLimiter;
  /** Pages rendering at once (default 2). */
  maxPages?: number;
  /** Shut the browser down after this long without a fetch, in ms (default 60 s). */
  idleCloseMs?: number;
  /** Bytes one render may receive for all its requests (default 4 × FETCH_MAX_BYTES). */
  maxTrafficBytes?: number;
  /** Chromium start-up timeout in ms (default 30 s). */
  launchTimeoutMs?: number;
  /** After a failed start, how long fetches fail at once before trying again, in ms (default 30 s). */
  relaunchBackoffMs?: number;
  /** Observe every routing decision (tests, debug logging). */
  onRequest?: (e: BrowserRequestEvent) => void;
  /** Observe every connection the guard proxy opened or refused. */
  onProxy?: (e: ProxyEvent) => void;
  /** Warnings (a crash, a start without the sandbox). */
  warn?: (message: string) => void;
}

/** A request to the browser fetcher may name the element to wait for (the listing's selector). */
export interface BrowserFetchRequest extends FetchRequest {
  waitForSelector?: string | null;
}

export interface BrowserStats {
  running: boolean;
  pid: number | null;
  launches: number;
  crashes: number;
  /** Pages open now, and the most ever open at once. */
  activePages: number;
  maxActivePages: number;
  /** Fetches waiting for a page slot. */
  queued: number;
  pagesOpened: number;
  pagesClosed: number;
  /** Browser contexts the running browser holds (0 when idle). */
  openContexts: number;
}

export interface BrowserMemory {
  running: boolean;
  /** Chromium's processes (browser, renderers, utilities). */
  processes: number;
  /** Sum of their resident set sizes (shared pages counted in each), bytes. */
  rssBytes: number;
  /** Sum of their proportional set sizes (shared pages split), bytes; null where /proc has none. */
  pssBytes: number | null;
}

export interface BrowserFetcher extends Fetcher {
  fetch(req: BrowserFetchRequest): Promise<FetchResult>;
  /** For readiness/info: is there a Chromium to start, and did the last start work? */
  browserAvailable(): Promise<BrowserAvailability>;
  stats(): BrowserStats;
  /** Memory of the running browser's processes (Linux /proc; zeros when not running). */
  memory(): Promise<BrowserMemory>;
}

/** One render's state, shared by the render, its route handler and the error mapping. */
export interface RenderState {
  done: boolean;
  /** The deadline passed or the caller cancelled: the render is being torn down. */
  stopped: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** A refusal of the main-frame navigation by the route handler. */
  mainRefusal: FetchError | null;
}
