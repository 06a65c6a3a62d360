import { ApiError, createClient, type PricehoundClient, type Usage } from '@pricehound/client';
import { clearKey, getKey } from './session';

/**
 * The dashboard's one way to the API: @pricehound/client, the typed client generated from the
 * OpenAPI document (paths, queries and bodies checked by `tsc`), with its retries, idempotency
 * keys, pagination and errors. Same origin (CSP allows only 'self'; `vite dev` proxies /api).
 */
export { ApiError, NetworkError, RateLimitError, take } from '@pricehound/client';
export type { ErrorDetail } from '@pricehound/client';

/** The share of the hourly limit from which the dashboard warns (overview and header). */
export const NEAR_LIMIT = 0.8;

export type RateLimit = Usage;
type RateListener = (r: RateLimit) => void;
const rateListeners = new Set<RateListener>();
/** Called with the key's hourly window as the answers tell it (the header's usage badge listens). */
export function onRateLimit(fn: RateListener): () => void {
  rateListeners.add(fn);
  return () => rateListeners.delete(fn);
}

let onUnauthorized: () => void = () => undefined;
/** What to do when the key stops working (revoked while signed in): sign out. */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** A client of this origin's API with `key` (a fixed key: sign-in tries one before keeping it). */
export function clientWith(key: string): PricehoundClient {
  return createClient({ baseUrl: location.origin, apiKey: key });
}

/** The signed-in session's client: the tab's key, asked before every request. */
export const ph: PricehoundClient = createClient({
  baseUrl: location.origin,
  apiKey: getKey,
  onUsage: (u) => {
    for (const fn of rateListeners) fn(u);
  },
  onError: (err) => {
    // The session's key was refused: revoked while signed in.
    if (err instanceof ApiError && err.status === 401 && getKey()) {
      clearKey();
      onUnauthorized();
    }
  },
});
