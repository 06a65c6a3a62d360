/**
 * What a rendered page gives: its status, redirects and body as a FetchResult, or the
 * FetchError for an error status, too many redirects, a non-text answer or a page too large.
 */
import type { Page, Response as PwResponse } from 'playwright-core';
import type { ProxySession } from '../browser-proxy.js';
import { retryAfterNote, retryAfterPause } from '../retry-after.js';
import { FetchError, type FetchResult } from '../types.js';
import { overBudget } from './errors.js';
import type { BrowserFetcherConfig, BrowserFetchRequest, HostLimiter, RobotsCheck } from './types.js';

export const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
const TEXT_TYPES = /^(text\/|application\/(ld\+)?json\b|application\/(.+\+)?xml\b)/i;

export interface ResultRules {
  cfg: BrowserFetcherConfig;
  robots: RobotsCheck | undefined;
  limiter: HostLimiter | undefined;
  maxTrafficBytes: number;
}

export async function renderResult(
  page: Page,
  response: PwResponse,
  req: BrowserFetchRequest,
  url: URL,
  started: number,
  session: ProxySession,
  rules: ResultRules,
): Promise<FetchResult> {
  const { cfg } = rules;
  const status = response.status();
  const contentType = response.headers()['content-type'] ?? null;
  const redirects: string[] = [];
  for (let r = response.request().redirectedFrom(); r; r = r.redirectedFrom()) redirects.unshift(r.url());
  // redirectedFrom lists the URLs that redirected; the hops followed are their targets.
  const hops = [...redirects.slice(1), response.url()].slice(0, redirects.length);
  if (hops.length > cfg.fetchMaxRedirects) {
    throw new FetchError('too_many_redirects', `more than ${cfg.fetchMaxRedirects} redirects`);
  }
  const finalUrl = page.url();
  if (!/^https?:/.test(finalUrl)) {
    throw session.refused.at(-1) ?? new FetchError('network', `the page navigated to ${finalUrl.slice(0, 100)}`);
  }
  // robots.txt of where the redirects (or the page's own script) led.
  if (req.respectRobots && rules.robots && finalUrl !== url.href)
    await rules.robots(finalUrl, req.signal, req.proxyUrl);
  if (status >= 400) {
    // 429/503 with Retry-After pause the host for the HTTP fetcher too (shared limiter).
    // Unlike the HTTP fetcher, a 429 without Retry-After does not pause the host here.
    const retryAfterMs = retryAfterPause(status, response.headers()['retry-after']);
    if (retryAfterMs !== undefined && retryAfterMs > 0)
      rules.limiter?.pause?.(new URL(response.url()).hostname, retryAfterMs, status);
    throw new FetchError(
      'http_error',
      `the page answered HTTP ${status}${retryAfterNote(retryAfterMs)}`,
      status,
      retryAfterMs !== undefined ? { retryAfterMs } : undefined,
    );
  }
  let body: string;
  if (contentType === null || HTML_TYPES.test(contentType)) body = await page.content();
  else if (TEXT_TYPES.test(contentType)) body = await response.text();
  else
    throw new FetchError(
      'unsupported_content',
      `the page is ${contentType.split(';', 1)[0]!.trim()}, not HTML or text`,
    );
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > cfg.fetchMaxBytes) {
    throw new FetchError(
      'too_large',
      `the rendered page is ${bytes} bytes, more than FETCH_MAX_BYTES (${cfg.fetchMaxBytes})`,
    );
  }
  if (session.overBudget) throw overBudget(rules.maxTrafficBytes);
  return {
    url: req.url,
    finalUrl,
    status,
    contentType,
    body,
    bytes,
    redirects: hops,
    ms: Math.round(performance.now() - started),
  };
}
