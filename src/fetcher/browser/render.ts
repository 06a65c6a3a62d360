/**
 * One render: a fresh browser context and page for the fetch, routed and proxied, loaded,
 * settled and read, within FETCH_TIMEOUT_MS; its page, context and proxy session are closed
 * whatever happens.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { AddressGuard } from '../address-guard.js';
import type { GuardProxy } from '../browser-proxy.js';
import { FetchError, type FetchResult } from '../types.js';
import { cancelled, renderFailure } from './errors.js';
import type { SharedBrowser } from './lifecycle.js';
import { renderResult, type ResultRules } from './result.js';
import { routeRequest } from './routing.js';
import { settle } from './settle.js';
import type { BrowserFetchRequest, BrowserRequestEvent, RenderState } from './types.js';

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

export interface PageRendererOptions extends ResultRules {
  guard: AddressGuard;
  proxy: GuardProxy;
  /** The shared browser: a wedged one is discarded; a closed fetcher explains a failure. */
  chromium: SharedBrowser;
  onRequest: ((e: BrowserRequestEvent) => void) | undefined;
  warn: (message: string) => void;
}

export class PageRenderer {
  /** Pages open now, the most ever open at once, opened and closed in all. */
  readonly pages = { active: 0, maxActive: 0, opened: 0, closed: 0 };

  constructor(private readonly o: PageRendererOptions) {}

  private readonly record = (e: BrowserRequestEvent): void => {
    try {
      this.o.onRequest?.(e);
    } catch {
      // an observer's failure is not the fetch's
    }
  };

  async render(browser: Browser, req: BrowserFetchRequest, url: URL, started: number): Promise<FetchResult> {
    const { cfg, proxy } = this.o;
    const timeoutMs = cfg.fetchTimeoutMs;
    const deadline = performance.now() + timeoutMs;
    const remaining = (): number => Math.max(1, Math.floor(deadline - performance.now()));
    const state: RenderState = { done: false, stopped: false, timedOut: false, aborted: false, mainRefusal: null };
    const session = proxy.openSession({ maxBytes: this.o.maxTrafficBytes, upstream: req.proxyUrl ?? null });
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
        userAgent: cfg.userAgent,
        proxy: { server: await proxy.listen(), username: session.username, password: session.password },
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
      await context.route('**/*', (route, request) => routeRequest(route, request, state, this.o.guard, this.record));
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
      await settle(opened, response, req.waitForSelector ?? null, remaining());
      return await renderResult(opened, response, req, url, started, session, this.o);
    };

    const running = work();
    running.catch(() => undefined); // settles after the race when stopped: already reported
    try {
      return await Promise.race([running, stopped]);
    } catch (err) {
      throw renderFailure(err, {
        state,
        session,
        browser,
        url,
        timeoutMs: cfg.fetchTimeoutMs,
        maxTrafficBytes: this.o.maxTrafficBytes,
        fetcherClosed: this.o.chromium.closed,
      });
    } finally {
      state.done = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      const p = page as Page | null;
      if (p) {
        await within(
          p.close().catch(() => undefined),
          CLOSE_WAIT_MS,
        );
        this.pageClosed();
      }
      if (!(await within(closeContext(), CLOSE_WAIT_MS))) {
        // A browser that cannot close a context is wedged: replace it.
        this.o.warn(`Chromium did not close a page within ${CLOSE_WAIT_MS} ms; restarting it`);
        this.o.chromium.discard(browser);
      }
      proxy.closeSession(session);
    }
  }

  private pageOpened(): void {
    this.pages.opened++;
    this.pages.active++;
    this.pages.maxActive = Math.max(this.pages.maxActive, this.pages.active);
  }

  private pageClosed(): void {
    this.pages.closed++;
    this.pages.active--;
  }
}
