/**
 * The route handler: every request a page's documents, frames, scripts and workers make is
 * decided here before it is sent. Only http(s) (under the address guard) and data: URLs load;
 * images, media, fonts, manifests and text tracks never do.
 */
import type { Request as PwRequest, Route } from 'playwright-core';
import type { AddressGuard } from '../address-guard.js';
import { FetchError } from '../types.js';
import { isFetchedScheme, urlPort } from '../url-policy.js';
import type { BrowserRequestEvent, RenderState } from './types.js';

/** Resource types never loaded: they cannot change the price and cost time. */
const BLOCKED_RESOURCE_TYPES = new Set(['image', 'media', 'font', 'manifest', 'texttrack']);

export async function routeRequest(
  route: Route,
  request: PwRequest,
  state: RenderState,
  guard: AddressGuard,
  record: (e: BrowserRequestEvent) => void,
): Promise<void> {
  const url = request.url();
  const resourceType = request.resourceType();
  const navigation = request.isNavigationRequest();
  const abort = async (reason: BrowserRequestEvent['reason'], message?: string): Promise<void> => {
    record({ url, resourceType, navigation, action: 'abort', reason, ...(message ? { message } : {}) });
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
      record({ url: url.slice(0, 64), resourceType, navigation, action: 'continue' });
      return await route.continue();
    }
    if (!isFetchedScheme(u.protocol)) return await abort('scheme', `${u.protocol} URLs are not loaded`);
    if (!navigation && BLOCKED_RESOURCE_TYPES.has(resourceType)) return await abort('resource_type');
    try {
      await guard.resolve(u.hostname, urlPort(u));
    } catch (err) {
      const fe = err instanceof FetchError ? err : new FetchError('network', String(err));
      if (navigation && request.frame().parentFrame() === null) state.mainRefusal ??= fe;
      return await abort(fe.code, fe.message);
    }
    if (state.done) return await abort('closed');
    record({ url, resourceType, navigation, action: 'continue' });
    await route.continue();
  } catch {
    // The page or context went away while deciding: nothing left to route.
  }
}
