/**
 * The browser fetcher: renders a page in the system's Chromium (driven by playwright-core) for
 * listings with render_js, and returns the HTML as the page's scripts left it.
 *
 * - Chromium starts only when the first render_js fetch needs it, is shared by all fetches,
 *   restarts after a crash, and is shut down after `idleCloseMs` without work.
 * - At most `maxPages` pages render at once; the rest wait in line (the caller's signal can
 *   give up waiting). Each fetch gets a fresh browser context (no cookies, storage or cache
 *   shared with any other fetch), and its page and context are closed whatever happens.
 * - Address rules are enforced twice: `context.route('**∕*')` asks the address guard for every
 *   request the page makes and aborts refused ones before they are sent; and Chromium's only
 *   network path is the in-process guard proxy (browser-proxy.ts), which catches what routing
 *   never sees (redirect hops, preconnects, WebSockets) and connects only to approved
 *   addresses. Only http(s) and data: URLs load; downloads, service workers, images, fonts and
 *   media are blocked.
 * - Same User-Agent, timeout (FETCH_TIMEOUT_MS, counted from when the page opens) and size cap
 *   (FETCH_MAX_BYTES on the rendered HTML, and a traffic budget for everything the page loads)
 *   as the HTTP fetcher; robots.txt through the check the HTTP fetcher uses.
 * - Without a usable Chromium, fetches fail with FetchError('browser_unavailable') and nothing
 *   else is affected: playwright-core itself is imported only when a browser is launched.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserType, Page, Request as PwRequest, Response as PwResponse, Route } from 'playwright-core';
import type { Config } from '../config.js';
import { AddressGuard } from './address-guard.js';
import { GuardProxy, type ProxyEvent, type ProxySession } from './browser-proxy.js';
import { retryAfterNote, retryAfterPause } from './retry-after.js';
import { type BrowserAvailability, FetchError, type FetchRequest, type FetchResult, type Fetcher } from './types.js';
import { acceptPageUrl, isFetchedScheme } from './url-policy.js';

export type { BrowserAvailability } from './types.js';

export type BrowserFetcherConfig = Pick<
  Config,
  'chromiumPath' | 'allowLoopbackTargets' | 'userAgent' | 'fetchTimeoutMs' | 'fetchMaxBytes' | 'fetchMaxRedirects'
>;

/** The message of every browser_unavailable error caused by a missing Chromium. */
export const NO_CHROMIUM_MESSAGE = 'no Chromium found: install the chromium package or set CHROMIUM_PATH';

/** Where Chromium is looked for when CHROMIUM_PATH is unset, in order (then the same names on PATH). */
export const CHROMIUM_CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/usr/lib/chromium/chromium',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];


async function isExecutableFile(p: string): Promise<boolean> {
  try {
    const st = await fs.stat(p);
    if (!st.isFile()) return false;
    await fs.access(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Find the Chromium to use: CHROMIUM_PATH when set (and then only it), else the usual install
 * locations and PATH. Looks at the file system only; it does not start anything.
 */
export async function findChromium(chromiumPath: string | undefined, envPath = process.env.PATH ?? ''): Promise<BrowserAvailability> {
  if (chromiumPath !== undefined) {
    if (await isExecutableFile(chromiumPath)) return { available: true, path: chromiumPath };
    return { available: false, reason: `${NO_CHROMIUM_MESSAGE} (CHROMIUM_PATH=${chromiumPath} is not an executable file)` };
  }
  const onPath = envPath
    .split(path.delimiter)
    .filter((d) => d !== '')
    .flatMap((d) => CHROMIUM_NAMES.map((n) => path.join(d, n)));
  for (const p of [...CHROMIUM_CANDIDATES, ...onPath]) {
    if (await isExecutableFile(p)) return { available: true, path: p };
  }
  return { available: false, reason: NO_CHROMIUM_MESSAGE };
}

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

/** Resource types never loaded: they cannot change the price and cost time. */
const BLOCKED_RESOURCE_TYPES = new Set(['image', 'media', 'font', 'manifest', 'texttrack']);

/** Ends the settle wait early: price-ish markup with a digit in it (runs in the page). */
const PRICE_SIGNAL = `(() => {
  const digit = (s) => /\\d/.test(s || '');
  for (const s of document.querySelectorAll('script[type="application/ld+json"]')) {
    if (/"(?:price|lowPrice)"\\s*:/.test(s.textContent || '')) return true;
  }
  for (const e of document.querySelectorAll('[itemprop="price"]')) {
    if (digit(e.getAttribute('content')) || digit(e.textContent)) return true;
  }
  if (document.querySelector('meta[property="product:price:amount"][content], meta[property="og:price:amount"][content]')) return true;
  for (const e of document.querySelectorAll('[class*="price" i], [id*="price" i], [data-price]')) {
    if (digit(e.textContent) || digit(e.getAttribute('data-price'))) return true;
  }
  return false;
})()`;

/** Like PRICE_SIGNAL for the listing's own CSS selector: its element exists and holds a digit. */
function selectorSignal(selector: string): string {
  return `(() => {
  const e = document.querySelector(${JSON.stringify(selector)});
  return !!e && /\\d/.test((e.getAttribute('content') || '') + (e.textContent || ''));
})()`;
}

/** After the price signal, how long more to wait for the network to go quiet, in ms. */
const SETTLE_GRACE_MS = 500;

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
const TEXT_TYPES = /^(text\/|application\/(ld\+)?json\b|application\/(.+\+)?xml\b)/i;

/** Launch flags: no background traffic, no GPU, WebRTC only through the proxy, no own DNS. */
const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-dev-shm-usage',
  '--mute-audio',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // Every connection goes through the guard proxy (an IP literal), so Chromium needs no DNS;
  // this makes sure it never resolves a name itself.
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];

class Slots {
  private free: number;
  private readonly waiters: Array<() => void> = [];

  constructor(n: number) {
    this.free = n;
  }

  get queued(): number {
    return this.waiters.length;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw cancelled(signal);
    if (this.free > 0) {
      this.free--;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(cancelled(signal!));
      };
      this.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.free++;
    };
  }
}

function cancelled(signal: AbortSignal): FetchError {
  const reason: unknown = signal.reason;
  if (reason instanceof FetchError) return reason;
  return new FetchError('timeout', 'the fetch was cancelled before the page finished', undefined, { cause: reason });
}

/** `p`, or the cancellation if `signal` aborts first (`p` itself goes on: a launch is shared). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(cancelled(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

/** Longest wait for a page or context to close before the browser is considered wedged, in ms. */
const CLOSE_WAIT_MS = 5_000;

/** Whether `p` settled within `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0]!.trim();
}

interface RenderState {
  done: boolean;
  /** The deadline passed or the caller cancelled: the render is being torn down. */
  stopped: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** A refusal of the main-frame navigation by the route handler. */
  mainRefusal: FetchError | null;
}

class ChromiumFetcher implements BrowserFetcher {
  private readonly cfg: BrowserFetcherConfig;
  private readonly guard: AddressGuard;
  private readonly robots: RobotsCheck | undefined;
  private readonly limiter: HostLimiter | undefined;
  private readonly proxy: GuardProxy;
  private readonly slots: Slots;
  private readonly idleCloseMs: number;
  private readonly maxTrafficBytes: number;
  private readonly launchTimeoutMs: number;
  private readonly relaunchBackoffMs: number;
  private readonly onRequest: ((e: BrowserRequestEvent) => void) | undefined;
  private readonly warn: (message: string) => void;

  private browser: Browser | null = null;
  private browserPid: number | null = null;
  private launching: Promise<Browser> | null = null;
  private launchFailure: { at: number; error: FetchError } | null = null;
  private location: Promise<BrowserAvailability> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Fetches between start and end (waiting or rendering): the browser is not idle. */
  private inFlight = 0;
  private closed = false;
  private counters = { launches: 0, crashes: 0, activePages: 0, maxActivePages: 0, pagesOpened: 0, pagesClosed: 0 };

  constructor(cfg: BrowserFetcherConfig, opts: BrowserFetcherOptions) {
    this.cfg = cfg;
    this.guard = opts.guard ?? new AddressGuard({ allowLoopback: cfg.allowLoopbackTargets });
    this.robots = opts.robots;
    this.limiter = opts.limiter;
    this.proxy = new GuardProxy({ guard: this.guard, onEvent: opts.onProxy, connectTimeoutMs: Math.min(10_000, cfg.fetchTimeoutMs) });
    this.slots = new Slots(Math.max(1, opts.maxPages ?? 2));
    this.idleCloseMs = opts.idleCloseMs ?? 60_000;
    this.maxTrafficBytes = opts.maxTrafficBytes ?? 4 * cfg.fetchMaxBytes;
    this.launchTimeoutMs = opts.launchTimeoutMs ?? 30_000;
    this.relaunchBackoffMs = opts.relaunchBackoffMs ?? 30_000;
    this.onRequest = opts.onRequest;
    this.warn = opts.warn ?? ((m) => process.emitWarning(m, 'PricehoundBrowser'));
  }

  stats(): BrowserStats {
    const b = this.browser;
    return {
      running: b?.isConnected() ?? false,
      pid: b?.isConnected() ? this.browserPid : null,
      launches: this.counters.launches,
      crashes: this.counters.crashes,
      activePages: this.counters.activePages,
      maxActivePages: this.counters.maxActivePages,
      queued: this.slots.queued,
      pagesOpened: this.counters.pagesOpened,
      pagesClosed: this.counters.pagesClosed,
      openContexts: b?.isConnected() ? b.contexts().length : 0,
    };
  }

  private locate(): Promise<BrowserAvailability> {
    // The file system is asked once; a failed start is remembered separately (launchFailure).
    this.location ??= findChromium(this.cfg.chromiumPath).then((loc) => {
      if (!loc.available) this.location = null; // installed later: found on the next call
      return loc;
    });
    return this.location;
  }

  async browserAvailable(): Promise<BrowserAvailability> {
    const loc = await this.locate();
    if (!loc.available) return loc;
    if (this.browser?.isConnected()) return { available: true, path: loc.path };
    if (this.launchFailure) return { available: false, path: loc.path, reason: this.launchFailure.error.message };
    return loc;
  }

  async fetch(req: BrowserFetchRequest): Promise<FetchResult> {
    const started = performance.now();
    if (this.closed) throw new FetchError('network', 'the browser fetcher has been closed');
    this.inFlight++;
    this.clearIdle();
    try {
      // The HTTP fetcher's URL policy, before anything else: no browser starts for a refused URL.
      const url = acceptPageUrl(req.url);
      const loc = await this.locate();
      if (!loc.available) throw new FetchError('browser_unavailable', loc.reason ?? NO_CHROMIUM_MESSAGE);
      // Refused addresses and robots.txt fail before a browser starts or a page opens.
      await this.guard.resolve(url.hostname);
      if (req.respectRobots && this.robots) await this.robots(url.href, req.signal, req.proxyUrl);
      // The site's turn first, then a page: a page slot is not held while the site's delay runs.
      const releaseHost = this.limiter ? await this.limiter.acquire(url.hostname, req.signal) : undefined;
      try {
        const release = await this.slots.acquire(req.signal);
        try {
          const browser = await abortable(this.ensureBrowser(), req.signal);
          this.limiter?.markStarted?.(url.hostname);
          return await this.render(browser, req, url, started);
        } finally {
          release();
        }
      } finally {
        releaseHost?.();
      }
    } finally {
      this.inFlight--;
      this.scheduleIdle();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearIdle();
    await this.launching?.catch(() => undefined);
    await this.closeBrowser();
    await this.proxy.close();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private scheduleIdle(): void {
    if (this.closed || this.inFlight > 0 || !this.browser) return;
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.inFlight === 0) void this.closeBrowser();
    }, this.idleCloseMs);
    this.idleTimer.unref();
  }

  private async closeBrowser(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    if (!b) return;
    try {
      await b.close();
    } catch {
      // already gone
    }
  }

  private ensureBrowser(): Promise<Browser> {
    if (this.browser?.isConnected()) return Promise.resolve(this.browser);
    const failed = this.launchFailure;
    if (failed && Date.now() - failed.at < this.relaunchBackoffMs) return Promise.reject(failed.error);
    this.launching ??= this.launch().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const loc = await this.locate();
    if (!loc.available || !loc.path) throw new FetchError('browser_unavailable', loc.reason ?? NO_CHROMIUM_MESSAGE);
    const executablePath = loc.path;
    const proxyServer = await this.proxy.listen();
    let chromium: BrowserType;
    try {
      ({ chromium } = await import('playwright-core'));
    } catch (err) {
      throw this.launchFailed(new FetchError('browser_unavailable', 'playwright-core is not installed (npm install)', undefined, { cause: err }));
    }
    const start = (sandbox: boolean): Promise<Browser> =>
      chromium.launch({
        executablePath,
        headless: true,
        chromiumSandbox: sandbox,
        args: CHROMIUM_ARGS,
        // The guard proxy, for anything outside a fetch's own context (which carries its
        // session's credentials); requests without credentials are refused there.
        proxy: { server: proxyServer },
        timeout: this.launchTimeoutMs,
        // The service's own shutdown closes the browser (fetcher.close()).
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    // Chromium's sandbox cannot run as root; elsewhere it is tried first.
    const trySandbox = process.getuid?.() !== 0;
    let browser: Browser;
    try {
      try {
        browser = await start(trySandbox);
      } catch (err) {
        if (!trySandbox) throw err;
        browser = await start(false);
        this.warn(`Chromium started without its sandbox (it failed with the sandbox: ${firstLine(String((err as Error).message))})`);
      }
    } catch (err) {
      throw this.launchFailed(
        new FetchError('browser_unavailable', `Chromium at ${executablePath} did not start: ${firstLine(String((err as Error).message))}`, undefined, { cause: err }),
      );
    }
    this.launchFailure = null;
    this.counters.launches++;
    if (this.closed) {
      await browser.close().catch(() => undefined);
      throw new FetchError('network', 'the browser fetcher has been closed');
    }
    this.browser = browser;
    this.browserPid = (await this.processIds(browser)).find((p) => p.type === 'browser')?.id ?? null;
    browser.on('disconnected', () => {
      if (this.browser !== browser) return; // closed on purpose
      this.browser = null;
      this.counters.crashes++;
      this.warn('Chromium exited unexpectedly; it starts again with the next render_js fetch');
    });
    return browser;
  }

  /** Chromium's own list of its processes (empty if it cannot tell). */
  private async processIds(browser: Browser): Promise<Array<{ type: string; id: number }>> {
    try {
      const cdp = await browser.newBrowserCDPSession();
      try {
        const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: Array<{ type: string; id: number }> };
        return info.processInfo;
      } finally {
        await cdp.detach().catch(() => undefined);
      }
    } catch {
      return [];
    }
  }

  async memory(): Promise<BrowserMemory> {
    const b = this.browser;
    if (!b?.isConnected()) return { running: false, processes: 0, rssBytes: 0, pssBytes: null };
    const procs = await this.processIds(b);
    let rss = 0;
    let pss: number | null = 0;
    for (const { id } of procs) {
      try {
        const status = await fs.readFile(`/proc/${id}/status`, 'utf8');
        rss += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
      } catch {
        // exited in between, or no /proc
      }
      try {
        const rollup = await fs.readFile(`/proc/${id}/smaps_rollup`, 'utf8');
        if (pss !== null) pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) * 1024;
      } catch {
        pss = null;
      }
    }
    return { running: true, processes: procs.length, rssBytes: rss, pssBytes: pss };
  }

  private launchFailed(error: FetchError): FetchError {
    this.launchFailure = { at: Date.now(), error };
    return error;
  }

  private record(e: BrowserRequestEvent): void {
    try {
      this.onRequest?.(e);
    } catch {
      // an observer's failure is not the fetch's
    }
  }

  private async onRoute(route: Route, request: PwRequest, state: RenderState): Promise<void> {
    const url = request.url();
    const resourceType = request.resourceType();
    const navigation = request.isNavigationRequest();
    const abort = async (reason: BrowserRequestEvent['reason'], message?: string): Promise<void> => {
      this.record({ url, resourceType, navigation, action: 'abort', reason, ...(message ? { message } : {}) });
      await route.abort('blockedbyclient');
    };
    try {
      if (state.done) return await abort('closed');
      let u: URL;
      try {
        u = new URL(url);
      } catch {
        return await abort('invalid_url');
      }
      if (u.protocol === 'data:') {
        this.record({ url: url.slice(0, 64), resourceType, navigation, action: 'continue' });
        return await route.continue();
      }
      if (!isFetchedScheme(u.protocol)) return await abort('scheme', `${u.protocol} URLs are not loaded`);
      if (!navigation && BLOCKED_RESOURCE_TYPES.has(resourceType)) return await abort('resource_type');
      try {
        await this.guard.resolve(u.hostname);
      } catch (err) {
        const fe = err instanceof FetchError ? err : new FetchError('network', String(err));
        if (navigation && request.frame().parentFrame() === null) state.mainRefusal ??= fe;
        return await abort(fe.code, fe.message);
      }
      if (state.done) return await abort('closed');
      this.record({ url, resourceType, navigation, action: 'continue' });
      await route.continue();
    } catch {
      // The page or context went away while deciding: nothing left to route.
    }
  }

  private async render(browser: Browser, req: BrowserFetchRequest, url: URL, started: number): Promise<FetchResult> {
    const timeoutMs = this.cfg.fetchTimeoutMs;
    const deadline = performance.now() + timeoutMs;
    const remaining = (): number => Math.max(1, Math.floor(deadline - performance.now()));
    const state: RenderState = { done: false, stopped: false, timedOut: false, aborted: false, mainRefusal: null };
    const session = this.proxy.openSession({ maxBytes: this.maxTrafficBytes, upstream: req.proxyUrl ?? null });
    let context: BrowserContext | null = null;
    let page: Page | null = null;
    // One close of the context, awaited by whoever comes last (the deadline may start it).
    let closing: Promise<void> | null = null;
    const closeContext = (): Promise<void> => {
      if (!context) return Promise.resolve();
      closing ??= context.close().catch(() => undefined);
      return closing;
    };
    // The deadline and the caller's signal end the render at once, whatever Playwright call is
    // pending: a call whose context is closed under it does not always settle (newPage can
    // wait forever), so the render races its work against this.
    let stopWork!: (err: Error) => void;
    const stopped = new Promise<never>((_, reject) => {
      stopWork = reject;
    });
    stopped.catch(() => undefined);
    const stop = (): void => {
      state.stopped = true;
      session.destroySockets();
      void closeContext();
      stopWork(new Error('render stopped'));
    };
    const timer = setTimeout(() => {
      state.timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = (): void => {
      state.aborted = true;
      stop();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });

    const work = async (): Promise<FetchResult> => {
      if (req.signal?.aborted) throw cancelled(req.signal);
      context = await browser.newContext({
        userAgent: this.cfg.userAgent,
        proxy: { server: await this.proxy.listen(), username: session.username, password: session.password },
        acceptDownloads: false,
        serviceWorkers: 'block',
        javaScriptEnabled: true,
        viewport: { width: 1280, height: 900 },
        locale: 'en-US',
      });
      if (state.stopped || state.done) {
        await closeContext();
        throw new Error('render stopped');
      }
      await context.route('**/*', (route, request) => this.onRoute(route, request, state));
      const opened = await context.newPage();
      if (state.stopped || state.done) {
        void opened.close().catch(() => undefined);
        throw new Error('render stopped');
      }
      page = opened;
      this.pageOpened();
      // Pop-ups never render: only the page we opened does.
      context.on('page', (p) => {
        if (p !== opened) void p.close().catch(() => undefined);
      });
      const response = await opened.goto(url.href, { waitUntil: 'domcontentloaded', timeout: remaining() });
      if (!response) throw new FetchError('network', `the browser got no response for ${url.href}`);
      await this.settle(opened, response, req.waitForSelector ?? null, remaining());
      return await this.result(opened, response, req, url, started, session);
    };

    const running = work();
    running.catch(() => undefined); // settles after the race when stopped: already reported
    try {
      return await Promise.race([running, stopped]);
    } catch (err) {
      throw this.failure(err, state, session, browser, url);
    } finally {
      state.done = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      const p = page as Page | null;
      if (p) {
        await within(p.close().catch(() => undefined), CLOSE_WAIT_MS);
        this.pageClosed();
      }
      if (!(await within(closeContext(), CLOSE_WAIT_MS))) {
        // A browser that cannot close a context is wedged: replace it.
        this.warn(`Chromium did not close a page within ${CLOSE_WAIT_MS} ms; restarting it`);
        if (this.browser === browser) void this.closeBrowser();
      }
      this.proxy.closeSession(session);
    }
  }

  private pageOpened(): void {
    this.counters.pagesOpened++;
    this.counters.activePages++;
    this.counters.maxActivePages = Math.max(this.counters.maxActivePages, this.counters.activePages);
  }

  private pageClosed(): void {
    this.counters.pagesClosed++;
    this.counters.activePages--;
  }

  /**
   * After DOMContentLoaded: wait until the network is idle (500 ms without requests) or until
   * price-ish markup appears plus a short grace; with the listing's selector, until its element
   * holds a digit (plus the grace); at most until the deadline.
   * Reaching the deadline here is not an error: the document is there, scripts just kept
   * going; extraction decides whether what rendered holds a price.
   */
  private async settle(page: Page, response: PwResponse, selector: string | null, ms: number): Promise<void> {
    if (!HTML_TYPES.test(response.headers()['content-type'] ?? 'text/html')) return;
    const budget = Math.max(1, ms - 50);
    const idle = page.waitForLoadState('networkidle', { timeout: budget }).catch(() => undefined);
    // The price signal (or the listing's selector holding a digit), then a short grace. If it
    // cannot be evaluated (a selector that is not valid CSS), only the network decides.
    const signal = page
      .waitForFunction(selector ? selectorSignal(selector) : PRICE_SIGNAL, undefined, { timeout: budget, polling: 100 })
      .then(
        () => page.waitForLoadState('networkidle', { timeout: Math.min(SETTLE_GRACE_MS, budget) }),
        (err: unknown) => ((err as Error | undefined)?.name === 'TimeoutError' ? undefined : idle),
      )
      .catch(() => undefined);
    // The listing's selector names the element holding the price: wait for it, not for a
    // quiet network (a script may write it later without any request).
    await (selector ? signal : Promise.race([idle, signal]));
  }

  private async result(page: Page, response: PwResponse, req: BrowserFetchRequest, url: URL, started: number, session: ProxySession): Promise<FetchResult> {
    const status = response.status();
    const contentType = response.headers()['content-type'] ?? null;
    const redirects: string[] = [];
    for (let r = response.request().redirectedFrom(); r; r = r.redirectedFrom()) redirects.unshift(r.url());
    // redirectedFrom lists the URLs that redirected; the hops followed are their targets.
    const hops = [...redirects.slice(1), response.url()].slice(0, redirects.length);
    if (hops.length > this.cfg.fetchMaxRedirects) {
      throw new FetchError('too_many_redirects', `more than ${this.cfg.fetchMaxRedirects} redirects`);
    }
    const finalUrl = page.url();
    if (!/^https?:/.test(finalUrl)) {
      throw session.refused.at(-1) ?? new FetchError('network', `the page navigated to ${finalUrl.slice(0, 100)}`);
    }
    // robots.txt of where the redirects (or the page's own script) led.
    if (req.respectRobots && this.robots && finalUrl !== url.href) await this.robots(finalUrl, req.signal, req.proxyUrl);
    if (status >= 400) {
      // 429/503 with Retry-After pause the host for the HTTP fetcher too (shared limiter).
      // Unlike the HTTP fetcher, a 429 without Retry-After does not pause the host here.
      const retryAfterMs = retryAfterPause(status, response.headers()['retry-after']);
      if (retryAfterMs !== undefined && retryAfterMs > 0) this.limiter?.pause?.(new URL(response.url()).hostname, retryAfterMs, status);
      throw new FetchError('http_error', `the page answered HTTP ${status}${retryAfterNote(retryAfterMs)}`, status, retryAfterMs !== undefined ? { retryAfterMs } : undefined);
    }
    let body: string;
    if (contentType === null || HTML_TYPES.test(contentType)) body = await page.content();
    else if (TEXT_TYPES.test(contentType)) body = await response.text();
    else throw new FetchError('unsupported_content', `the page is ${contentType.split(';', 1)[0]!.trim()}, not HTML or text`);
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > this.cfg.fetchMaxBytes) {
      throw new FetchError('too_large', `the rendered page is ${bytes} bytes, more than FETCH_MAX_BYTES (${this.cfg.fetchMaxBytes})`);
    }
    if (session.overBudget) throw this.overBudget();
    return { url: req.url, finalUrl, status, contentType, body, bytes, redirects: hops, ms: Math.round(performance.now() - started) };
  }

  private overBudget(): FetchError {
    return new FetchError('too_large', `the page loaded more than ${this.maxTrafficBytes} bytes in all`);
  }

  private failure(err: unknown, state: RenderState, session: ProxySession, browser: Browser, url: URL): FetchError {
    if (err instanceof FetchError) return err;
    const message = String((err as Error | undefined)?.message ?? err);
    if (state.timedOut) return new FetchError('timeout', `the page did not finish loading within ${this.cfg.fetchTimeoutMs} ms`, undefined, { cause: err });
    if (state.aborted) return new FetchError('timeout', 'the fetch was cancelled before the page finished', undefined, { cause: err });
    if (session.overBudget) return this.overBudget();
    if (this.closed) return new FetchError('network', 'the browser fetcher was closed during the fetch', undefined, { cause: err });
    if (!browser.isConnected()) {
      return new FetchError('network', 'Chromium exited while rendering the page; it restarts for the next fetch', undefined, { cause: err });
    }
    if (state.mainRefusal) return state.mainRefusal;
    if (/net::ERR_(TUNNEL_CONNECTION_FAILED|EMPTY_RESPONSE|CONNECTION_CLOSED|BLOCKED_BY_CLIENT|PROXY_CONNECTION_FAILED)/.test(message)) {
      const refusal = session.refused.at(-1);
      if (refusal) return refusal;
    }
    if (/Download is starting/.test(message)) {
      return new FetchError('unsupported_content', `${url.href} is a download, not a page`, undefined, { cause: err });
    }
    if ((err as Error | undefined)?.name === 'TimeoutError') {
      return new FetchError('timeout', `the page did not finish loading within ${this.cfg.fetchTimeoutMs} ms`, undefined, { cause: err });
    }
    const net = /net::(ERR_[A-Z_]+)/.exec(message);
    return new FetchError('network', net ? `the browser could not load the page (${net[1]})` : `the browser failed: ${firstLine(message)}`, undefined, { cause: err });
  }
}

/** The browser fetcher. Starts nothing until the first fetch. */
export function createBrowserFetcher(config: BrowserFetcherConfig, opts: BrowserFetcherOptions = {}): BrowserFetcher {
  return new ChromiumFetcher(config, opts);
}

/**
 * One Fetcher for the service: requests with renderJs go to the browser, the rest over HTTP.
 * Its browserAvailable() is the browser's, for /readyz.
 */
export function routeRenderJs(http: Fetcher, browser: Fetcher): Fetcher {
  return {
    fetch: (req) => (req.renderJs ? browser : http).fetch(req),
    browserAvailable: async () => (browser.browserAvailable ? browser.browserAvailable() : { available: false, reason: 'no browser fetcher configured' }),
    close: async () => {
      await Promise.all([http.close(), browser.close()]);
    },
  };
}
