import { ApiError, ph, take } from './api';
import type { Competitor, Product } from './types';

/**
 * Names for the ids lists carry (a listing names its product and competitor by id). Competitors
 * are few: read once per page load, 100 a request (up to 2000). Products are read one by one, at most six at
 * a time, and remembered for the session's page.
 */
let competitors: Promise<Map<string, Competitor>> | null = null;

export function competitorMap(refresh = false): Promise<Map<string, Competitor>> {
  if (refresh || !competitors) {
    competitors = take(ph.paginate('/api/v1/competitors'), 2000).then((list) => new Map(list.map((c) => [c.id, c])));
    competitors.catch(() => (competitors = null));
  }
  return competitors;
}

const products = new Map<string, Promise<Product | null>>();

export function rememberProduct(p: Product): void {
  products.set(p.id, Promise.resolve(p));
}

export function forgetProduct(id: string): void {
  products.delete(id);
}

export function productById(id: string): Promise<Product | null> {
  let p = products.get(id);
  if (!p) {
    p = ph.GET('/api/v1/products/{id}', { params: { path: { id } } }).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return null;
      products.delete(id);
      throw err;
    });
    products.set(id, p);
  }
  return p;
}

/** The products of `ids`, six requests at a time. */
export async function productsByIds(ids: Iterable<string>): Promise<Map<string, Product>> {
  const queue = [...new Set(ids)];
  const out = new Map<string, Product>();
  await Promise.all(
    Array.from({ length: Math.min(6, queue.length) }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const p = await productById(id).catch(() => null);
        if (p) out.set(id, p);
      }
    }),
  );
  return out;
}

export const competitorName = (map: Map<string, Competitor>, id: string | null) =>
  id === null ? 'Our shop' : (map.get(id)?.name ?? id);
