/**
 * After DOMContentLoaded, how long a render waits for the page's scripts: until the network is
 * quiet or price-ish markup appears, or until the listing's own selector holds a digit.
 */
import type { Page, Response as PwResponse } from 'playwright-core';
import { HTML_TYPES } from './result.js';

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

/**
 * After DOMContentLoaded: wait until the network is idle (500 ms without requests) or until
 * price-ish markup appears plus a short grace; with the listing's selector, until its element
 * holds a digit (plus the grace); at most until the deadline.
 * Reaching the deadline here is not an error: the document is there, scripts just kept
 * going; extraction decides whether what rendered holds a price.
 */
export async function settle(page: Page, response: PwResponse, selector: string | null, ms: number): Promise<void> {
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
