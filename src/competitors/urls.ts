/**
 * What the competitors and listings areas read from URLs: a site's domain, and proxy addresses
 * whose credentials must never be shown back in full.
 */

/**
 * The domain of a site: its host name in lower case (IDN in its ASCII `xn--` form, as DNS and the
 * URL parser write it), without a leading `www.` and without the port. undefined for text that is
 * not an absolute URL.
 */
export function domainOf(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  if (host === '') return undefined;
  host = host.replace(/\.$/, '');
  return host.startsWith('www.') && host.length > 4 ? host.slice(4) : host;
}

/**
 * A domain as a filter value: `Example.com`, `www.example.com` and `bücher.de` name the same
 * domain as `domainOf` derives it. undefined when the text is not a bare host name (a scheme,
 * path, port or credentials included).
 */
export function normaliseDomain(text: string): string | undefined {
  if (!/^([^\s/?#@\\:%[\]]+|\[[0-9a-fA-F:.]+\])$/.test(text)) return undefined;
  return domainOf(`http://${text}`);
}

/** true when `host` is `domain` or one of its subdomains (`shop.example.com` for `example.com`). */
export function withinDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * The parent domains of a domain, nearest first, down to two labels: `a.shop.example.com` gives
 * `shop.example.com`, `example.com`. None for an IP address or a one- or two-label name.
 */
export function parentDomains(domain: string): string[] {
  if (domain.startsWith('[') || /^[\d.]+$/.test(domain)) return [];
  const labels = domain.split('.');
  const parents: string[] = [];
  for (let i = 1; i <= labels.length - 2; i++) parents.push(labels.slice(i).join('.'));
  return parents;
}

export const MASK = '****';

/** Why a proxy URL cannot be used, or undefined when it can. */
export function proxyUrlProblem(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http or https proxy address';
  if (u.hostname === '') return 'must name the proxy host';
  if ((u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '') {
    return 'must be a proxy address such as http://user:password@proxy.example:8080, without a path, query or fragment';
  }
  if (u.username === MASK || u.password === MASK) {
    return `holds the masked credentials "${MASK}"; send the real ones (or the masked URL unchanged to keep the stored one)`;
  }
  return undefined;
}

/**
 * A proxy URL as responses show it: user name and password each replaced by `****` (when
 * present), the rest as stored. Both are masked because proxy services put the secret in either
 * (an API key as the user name and no password is common). Without credentials the URL is shown
 * as stored.
 */
export function maskProxyUrl(stored: string | null): string | null {
  if (stored === null) return null;
  let u: URL;
  try {
    u = new URL(stored);
  } catch {
    return null;
  }
  if (u.username === '' && u.password === '') return stored;
  const user = u.username === '' ? '' : MASK;
  const password = u.password === '' ? '' : `:${MASK}`;
  return `${u.protocol}//${user}${password}@${u.host}`;
}
