/**
 * The browser fetcher: renders a page in the system's Chromium (driven by playwright-core) for
 * listings with render_js, and returns the HTML as the page's scripts left it.
 *
 * - Chromium starts only when the first render_js fetch needs it, is shared by all fetches,
 *   restarts after a crash, and is shut down after `idleCloseMs` without work (lifecycle.ts).
 * - At most `maxPages` pages render at once; the rest wait in line (the caller's signal can
 *   give up waiting; slots.ts). Each fetch gets a fresh browser context (no cookies, storage or
 *   cache shared with any other fetch), and its page and context are closed whatever happens
 *   (render.ts).
 * - Address rules are enforced twice: `context.route('**∕*')` asks the address guard for every
 *   request the page makes and aborts refused ones before they are sent (routing.ts); and
 *   Chromium's only network path is the in-process guard proxy (../browser-proxy.ts), which
 *   catches what routing never sees (redirect hops, preconnects, WebSockets) and connects only
 *   to approved addresses. Only http(s) and data: URLs load; downloads, service workers,
 *   images, fonts and media are blocked.
 * - The HTTP fetcher's URL policy (../url-policy.ts), User-Agent, timeout (FETCH_TIMEOUT_MS,
 *   counted from when the page opens) and size cap (FETCH_MAX_BYTES on the rendered HTML, and a
 *   traffic budget for everything the page loads); robots.txt through the check the HTTP
 *   fetcher uses.
 * - Without a usable Chromium, fetches fail with FetchError('browser_unavailable') and nothing
 *   else is affected: playwright-core itself is imported only when a browser is launched.
 */
import type { Fetcher } from '../types.js';
import { ChromiumFetcher } from './fetcher.js';
import type { BrowserFetcher, BrowserFetcherConfig, BrowserFetcherOptions } from './types.js';

export type { BrowserAvailability } from '../types.js';
export { CHROMIUM_CANDIDATES, NO_CHROMIUM_MESSAGE, findChromium } from './chromium.js';
export { CHROMIUM_ARGS } from './lifecycle.js';
export type {
  BrowserFetchRequest,
  BrowserFetcher,
  BrowserFetcherConfig,
  BrowserFetcherOptions,
  BrowserMemory,
  BrowserRequestEvent,
  BrowserStats,
  HostLimiter,
  RobotsCheck,
} from './types.js';

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
    browserAvailable: async () =>
      browser.browserAvailable
        ? browser.browserAvailable()
        : { available: false, reason: 'no browser fetcher configured' },
    close: async () => {
      await Promise.all([http.close(), browser.close()]);
    },
  };
}
