/**
 * The one Chromium all of a process's renders share: found once, launched when the first
 * render needs it, started again after a crash, shut down after `idleCloseMs` without work.
 */
import type { Browser, BrowserType } from 'playwright-core';
import { type BrowserAvailability, FetchError } from '../types.js';
import { findChromium, NO_CHROMIUM_MESSAGE } from './chromium.js';
import { cancelled, firstLine } from './errors.js';
import { chromiumProcesses } from './memory.js';

/** Launch flags: no background traffic, no GPU, WebRTC only through the proxy, no own DNS (the dashboard's browser tests use them too). */
export const CHROMIUM_ARGS = [
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

export interface SharedBrowserOptions {
  /** CHROMIUM_PATH (unset: looked for, see chromium.ts). */
  chromiumPath: string | undefined;
  /** The guard proxy's address, started if need be: Chromium's only way out. */
  proxyServer: () => Promise<string>;
  idleCloseMs: number;
  launchTimeoutMs: number;
  relaunchBackoffMs: number;
  warn: (message: string) => void;
}

export class SharedBrowser {
  private browser: Browser | null = null;
  private browserPid: number | null = null;
  private launching: Promise<Browser> | null = null;
  private launchFailure: { at: number; error: FetchError } | null = null;
  private location: Promise<BrowserAvailability> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Fetches between start and end (waiting or rendering): the browser is not idle. */
  private inFlight = 0;
  private isClosed = false;
  private launchCount = 0;
  private crashCount = 0;

  constructor(private readonly opts: SharedBrowserOptions) {}

  /** The browser as it is now (null when none was started, or it was closed or crashed). */
  get current(): Browser | null {
    return this.browser;
  }

  /** The browser process's id while it runs. */
  get pid(): number | null {
    return this.browser?.isConnected() ? this.browserPid : null;
  }

  get launches(): number {
    return this.launchCount;
  }

  get crashes(): number {
    return this.crashCount;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  locate(): Promise<BrowserAvailability> {
    // The file system is asked once; a failed start is remembered separately (launchFailure).
    this.location ??= findChromium(this.opts.chromiumPath).then((loc) => {
      if (!loc.available) this.location = null; // installed later: found on the next call
      return loc;
    });
    return this.location;
  }

  async available(): Promise<BrowserAvailability> {
    const loc = await this.locate();
    if (!loc.available) return loc;
    if (this.browser?.isConnected()) return { available: true, path: loc.path };
    if (this.launchFailure) return { available: false, path: loc.path, reason: this.launchFailure.error.message };
    return loc;
  }

  /** A fetch starts: the browser is not idle until the returned function is called. */
  hold(): () => void {
    this.inFlight++;
    this.clearIdle();
    return () => {
      this.inFlight--;
      this.scheduleIdle();
    };
  }

  /** The running browser, started if need be; `signal` gives up waiting, not the start. */
  get(signal: AbortSignal | undefined): Promise<Browser> {
    return abortable(this.ensureBrowser(), signal);
  }

  /** A browser that cannot close a page is wedged: shut it down (the next fetch starts another). */
  discard(browser: Browser): void {
    if (this.browser === browser) void this.closeBrowser();
  }

  async close(): Promise<void> {
    this.isClosed = true;
    this.clearIdle();
    await this.launching?.catch(() => undefined);
    await this.closeBrowser();
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private scheduleIdle(): void {
    if (this.isClosed || this.inFlight > 0 || !this.browser) return;
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.inFlight === 0) void this.closeBrowser();
    }, this.opts.idleCloseMs);
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
    if (failed && Date.now() - failed.at < this.opts.relaunchBackoffMs) return Promise.reject(failed.error);
    this.launching ??= this.launch().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const loc = await this.locate();
    if (!loc.available || !loc.path) throw new FetchError('browser_unavailable', loc.reason ?? NO_CHROMIUM_MESSAGE);
    const executablePath = loc.path;
    const proxyServer = await this.opts.proxyServer();
    let chromium: BrowserType;
    try {
      ({ chromium } = await import('playwright-core'));
    } catch (err) {
      throw this.launchFailed(
        new FetchError('browser_unavailable', 'playwright-core is not installed (npm install)', undefined, {
          cause: err,
        }),
      );
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
        timeout: this.opts.launchTimeoutMs,
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
        this.opts.warn(
          `Chromium started without its sandbox (it failed with the sandbox: ${firstLine(String((err as Error).message))})`,
        );
      }
    } catch (err) {
      throw this.launchFailed(
        new FetchError(
          'browser_unavailable',
          `Chromium at ${executablePath} did not start: ${firstLine(String((err as Error).message))}`,
          undefined,
          { cause: err },
        ),
      );
    }
    this.launchFailure = null;
    this.launchCount++;
    if (this.isClosed) {
      await browser.close().catch(() => undefined);
      throw new FetchError('network', 'the browser fetcher has been closed');
    }
    this.browser = browser;
    this.browserPid = (await chromiumProcesses(browser)).find((p) => p.type === 'browser')?.id ?? null;
    browser.on('disconnected', () => {
      if (this.browser !== browser) return; // closed on purpose
      this.browser = null;
      this.crashCount++;
      this.opts.warn('Chromium exited unexpectedly; it starts again with the next render_js fetch');
    });
    return browser;
  }

  private launchFailed(error: FetchError): FetchError {
    this.launchFailure = { at: Date.now(), error };
    return error;
  }
}
