/**
 * The browser fetcher's order of work for one fetch: the URL policy, a Chromium to use, the
 * address guard and robots.txt (all before a browser starts or a page opens), the site's turn,
 * a page slot, the shared browser, then the render.
 */
import { AddressGuard, addressPolicy } from '../address-guard.js';
import { GuardProxy } from '../browser-proxy.js';
import { type BrowserAvailability, FetchError, type FetchResult } from '../types.js';
import { acceptPageUrl, urlPort } from '../url-policy.js';
import { NO_CHROMIUM_MESSAGE } from './chromium.js';
import { SharedBrowser } from './lifecycle.js';
import { browserMemory } from './memory.js';
import { PageRenderer } from './render.js';
import { PageSlots } from './slots.js';
import type {
  BrowserFetchRequest,
  BrowserFetcher,
  BrowserFetcherConfig,
  BrowserFetcherOptions,
  BrowserMemory,
  BrowserStats,
  HostLimiter,
  RobotsCheck,
} from './types.js';

export class ChromiumFetcher implements BrowserFetcher {
  private readonly guard: AddressGuard;
  private readonly robots: RobotsCheck | undefined;
  private readonly limiter: HostLimiter | undefined;
  private readonly proxy: GuardProxy;
  private readonly slots: PageSlots;
  private readonly chromium: SharedBrowser;
  private readonly renderer: PageRenderer;

  constructor(cfg: BrowserFetcherConfig, opts: BrowserFetcherOptions) {
    this.guard = opts.guard ?? new AddressGuard(addressPolicy(cfg));
    this.robots = opts.robots;
    this.limiter = opts.limiter;
    this.proxy = new GuardProxy({
      guard: this.guard,
      onEvent: opts.onProxy,
      connectTimeoutMs: Math.min(10_000, cfg.fetchTimeoutMs),
    });
    this.slots = new PageSlots(Math.max(1, opts.maxPages ?? 2));
    const warn = opts.warn ?? ((m: string) => process.emitWarning(m, 'PricehoundBrowser'));
    this.chromium = new SharedBrowser({
      chromiumPath: cfg.chromiumPath,
      proxyServer: () => this.proxy.listen(),
      idleCloseMs: opts.idleCloseMs ?? 60_000,
      launchTimeoutMs: opts.launchTimeoutMs ?? 30_000,
      relaunchBackoffMs: opts.relaunchBackoffMs ?? 30_000,
      warn,
    });
    this.renderer = new PageRenderer({
      cfg,
      guard: this.guard,
      proxy: this.proxy,
      chromium: this.chromium,
      robots: this.robots,
      limiter: this.limiter,
      maxTrafficBytes: opts.maxTrafficBytes ?? 4 * cfg.fetchMaxBytes,
      onRequest: opts.onRequest,
      warn,
    });
  }

  stats(): BrowserStats {
    const b = this.chromium.current;
    const pages = this.renderer.pages;
    return {
      running: b?.isConnected() ?? false,
      pid: this.chromium.pid,
      launches: this.chromium.launches,
      crashes: this.chromium.crashes,
      activePages: pages.active,
      maxActivePages: pages.maxActive,
      queued: this.slots.queued,
      pagesOpened: pages.opened,
      pagesClosed: pages.closed,
      openContexts: b?.isConnected() ? b.contexts().length : 0,
    };
  }

  browserAvailable(): Promise<BrowserAvailability> {
    return this.chromium.available();
  }

  memory(): Promise<BrowserMemory> {
    return browserMemory(this.chromium.current);
  }

  async fetch(req: BrowserFetchRequest): Promise<FetchResult> {
    const started = performance.now();
    if (this.chromium.closed) throw new FetchError('network', 'the browser fetcher has been closed');
    const done = this.chromium.hold();
    try {
      // The HTTP fetcher's URL policy, before anything else: no browser starts for a refused URL.
      const url = acceptPageUrl(req.url);
      const loc = await this.chromium.locate();
      if (!loc.available) throw new FetchError('browser_unavailable', loc.reason ?? NO_CHROMIUM_MESSAGE);
      // Refused addresses and robots.txt fail before a browser starts or a page opens.
      await this.guard.resolve(url.hostname, urlPort(url));
      if (req.respectRobots && this.robots) await this.robots(url.href, req.signal, req.proxyUrl);
      // The site's turn first, then a page: a page slot is not held while the site's delay runs.
      const releaseHost = this.limiter ? await this.limiter.acquire(url.hostname, req.signal) : undefined;
      try {
        const release = await this.slots.acquire(req.signal);
        try {
          const browser = await this.chromium.get(req.signal);
          this.limiter?.markStarted?.(url.hostname);
          return await this.renderer.render(browser, req, url, started);
        } finally {
          release();
        }
      } finally {
        releaseHost?.();
      }
    } finally {
      done();
    }
  }

  async close(): Promise<void> {
    await this.chromium.close();
    await this.proxy.close();
  }
}
