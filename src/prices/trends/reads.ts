/**
 * The products whose trends this process answered lately, and when: the spans task
 * (./spans.ts) builds the spans of those only. A product nobody reads costs nothing a day; one
 * read once today is answered from its blocks until the next run builds its spans. Kept in
 * memory: a restarted process starts empty and learns from the next reads.
 */

/** Products remembered at most (the oldest read is forgotten first): ~100 B each. */
const MAX_PRODUCTS = 1_000_000;

/** Product id -> the last read's instant, in the order of the last reads (a Map keeps insertion order). */
const lastRead = new Map<string, number>();

/** Notes a read of `productId`'s trends at `at` (epoch ms). */
export function noteTrendsRead(productId: string, at: number): void {
  lastRead.delete(productId);
  lastRead.set(productId, at);
  if (lastRead.size > MAX_PRODUCTS) lastRead.delete(lastRead.keys().next().value!);
}

/** The products read at or after `since`, in id order; those read before it are forgotten. */
export function productsReadSince(since: number): string[] {
  const out: string[] = [];
  for (const [id, at] of lastRead) {
    if (at < since) lastRead.delete(id);
    else out.push(id);
  }
  return out.sort();
}
