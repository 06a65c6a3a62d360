/**
 * Hash routes (`/dashboard/#/products/prod_...?q=kettle`): the server serves one page and
 * never has to know the dashboard's routes, so no path but a real file can reach it.
 */
export interface Route {
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path = '/', qs = ''] = raw.split('?', 2);
  return { path, params: {}, query: new URLSearchParams(qs) };
}

/** Matches `/products/:id` against a path; decoded params, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const a = pattern.split('/');
  const b = path.split('/');
  if (a.length !== b.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    const v = b[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(v);
      } catch {
        return null;
      }
    } else if (p !== v) return null;
  }
  return params;
}

/** A hash link for `path` with a query (empty values left out). */
export function href(path: string, query: Record<string, string | number | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

/** Navigates; to the page already shown, renders it again (a changed product, a new list). */
export function go(path: string, query: Record<string, string | number | null | undefined> = {}): void {
  const next = href(path, query);
  if (next === location.hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = next;
}
