/** What a failed render, a cancelled wait or an over-budget page becomes: a FetchError. */
import type { Browser } from 'playwright-core';
import type { ProxySession } from '../browser-proxy.js';
import { FetchError } from '../types.js';
import type { RenderState } from './types.js';

/** The caller's signal aborted: its reason when that is a FetchError, else a timeout. */
export function cancelled(signal: AbortSignal): FetchError {
  const reason: unknown = signal.reason;
  if (reason instanceof FetchError) return reason;
  return new FetchError('timeout', 'the fetch was cancelled before the page finished', undefined, { cause: reason });
}

export function firstLine(s: string): string {
  return s.split('\n', 1)[0]!.trim();
}

export function overBudget(maxTrafficBytes: number): FetchError {
  return new FetchError('too_large', `the page loaded more than ${maxTrafficBytes} bytes in all`);
}

export interface FailedRender {
  state: RenderState;
  session: ProxySession;
  browser: Browser;
  url: URL;
  timeoutMs: number;
  maxTrafficBytes: number;
  /** The fetcher was closed (the render's failure is then that, not Chromium's). */
  fetcherClosed: boolean;
}

/** The FetchError for whatever ended a render: the first cause that applies, in this order. */
export function renderFailure(err: unknown, r: FailedRender): FetchError {
  if (err instanceof FetchError) return err;
  const { state, session, browser, url } = r;
  const message = String((err as Error | undefined)?.message ?? err);
  if (state.timedOut)
    return new FetchError('timeout', `the page did not finish loading within ${r.timeoutMs} ms`, undefined, {
      cause: err,
    });
  if (state.aborted)
    return new FetchError('timeout', 'the fetch was cancelled before the page finished', undefined, { cause: err });
  if (session.overBudget) return overBudget(r.maxTrafficBytes);
  if (r.fetcherClosed)
    return new FetchError('network', 'the browser fetcher was closed during the fetch', undefined, { cause: err });
  if (!browser.isConnected()) {
    return new FetchError(
      'network',
      'Chromium exited while rendering the page; it restarts for the next fetch',
      undefined,
      { cause: err },
    );
  }
  if (state.mainRefusal) return state.mainRefusal;
  if (
    /net::ERR_(TUNNEL_CONNECTION_FAILED|EMPTY_RESPONSE|CONNECTION_CLOSED|BLOCKED_BY_CLIENT|PROXY_CONNECTION_FAILED)/.test(
      message,
    )
  ) {
    const refusal = session.refused.at(-1);
    if (refusal) return refusal;
  }
  if (/Download is starting/.test(message)) {
    return new FetchError('unsupported_content', `${url.href} is a download, not a page`, undefined, { cause: err });
  }
  if ((err as Error | undefined)?.name === 'TimeoutError') {
    return new FetchError('timeout', `the page did not finish loading within ${r.timeoutMs} ms`, undefined, {
      cause: err,
    });
  }
  const net = /net::(ERR_[A-Z_]+)/.exec(message);
  return new FetchError(
    'network',
    net ? `the browser could not load the page (${net[1]})` : `the browser failed: ${firstLine(message)}`,
    undefined,
    { cause: err },
  );
}
