/**
 * The API key of this tab. Kept in sessionStorage only: it survives a reload of the tab and is
 * gone when the tab closes; it is never written to localStorage, a cookie or a URL. Signing out
 * removes it (and the page reloads, so nothing read with it stays in memory).
 */
const KEY = 'pricehound.apiKey';

export function getKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function clearKey(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: nothing was kept
  }
}
