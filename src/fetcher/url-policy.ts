/**
 * Which page URLs pricehound fetches, for the HTTP fetcher and the browser alike: http and
 * https only, with a host, and without a user name or password. Credentials in a page URL
 * would leak into logs, check records and the Referer of every request the page makes; a
 * site behind authentication is reached through the competitor's `proxy_url` instead, whose
 * credentials are kept apart (and masked in responses).
 */
import { FetchError } from './types.js';

/** Whether a URL's scheme (URL.protocol, e.g. "https:") is one pages are fetched over. */
export function isFetchedScheme(protocol: string): boolean {
  return protocol === 'http:' || protocol === 'https:';
}

/** `scheme://` then the first character of a host (not another slash). */
const AUTHORITY = /^[a-z][a-z\d+.-]*:\/\/[^/\\]/i;

/** The port a request to an http(s) URL goes to: its own, or the scheme's. */
export function urlPort(u: { protocol: string; port: string }): number {
  return u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
}

/** A URL as messages show it: at most 120 characters. */
export function shortUrl(u: string): string {
  return u.length > 120 ? `${u.slice(0, 117)}...` : u;
}

/**
 * Parse a page URL, or throw FetchError('invalid_url') saying why it is not fetched. The
 * fragment is kept: the HTTP fetcher drops it, the browser navigates with it.
 */
export function acceptPageUrl(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new FetchError('invalid_url', `"${shortUrl(raw)}" is not a valid URL`);
  }
  if (!isFetchedScheme(u.protocol)) {
    throw new FetchError(
      'invalid_url',
      `only http and https addresses can be fetched, not ${u.protocol.replace(/:$/, '')}`,
    );
  }
  // The parser reads `http:///x`, `http:/x` and `http:\\x` as the host `x`: a host is only
  // what is written after `//`, so those have none (and nothing is looked up for them).
  if (u.hostname === '' || !AUTHORITY.test(raw.replace(/[\t\n\r]/g, '').trimStart())) {
    throw new FetchError('invalid_url', 'the URL has no host');
  }
  if (u.username !== '' || u.password !== '') {
    throw new FetchError('invalid_url', 'URLs with a user name or password are not fetched');
  }
  return u;
}
