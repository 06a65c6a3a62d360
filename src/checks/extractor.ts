import { type ExtractOptions, type Extraction, extractPrices } from '../extraction/index.js';
import { ThreadClient } from '../threads/client.js';
import type { ExtractMethods } from './extract-thread.js';

/**
 * Runs the extraction engine for checks and the extract dry run. Reading a 150 KB page costs
 * about 3 ms of CPU (docs/EXTRACTION.md): on the worker's event loop that is most of a check,
 * so one process could never do more checks per second than one core extracts, and every
 * fetch, claim and record would wait behind it. On a machine with two or more cores the pages
 * are read on a thread of their own instead, and the event loop only fetches and writes.
 */
export interface Extractor {
  extract(html: string, opts: ExtractOptions): Promise<Extraction>;
  close(): Promise<void>;
}

/** On the calling thread (one core, or tests that want it). */
export const inlineExtractor: Extractor = {
  extract: async (html, opts) => extractPrices(html, opts),
  close: async () => undefined,
};

/** `threads` from EXTRACT_THREADS (default 1 with two or more cores, else 0: inline). */
export function createExtractor(threads: number): Extractor {
  return threads > 0 ? new ThreadExtractor(threads) : inlineExtractor;
}

/**
 * One extraction thread: started on first use; after a crash, started again by the next page.
 * The thread sits next to this file (src/checks/extract-thread.ts).
 */
class Lane {
  private thread: ThreadClient<ExtractMethods> | undefined;

  /** Pages sent and not yet answered. */
  get pending(): number {
    return this.thread?.waiting ?? 0;
  }

  extract(html: string, opts: ExtractOptions): Promise<Extraction> {
    try {
      if (!this.thread || this.thread.dead) {
        this.thread = new ThreadClient<ExtractMethods>(new URL('./extract-thread.js', import.meta.url), {
          name: 'the extraction thread',
        });
      }
      return this.thread.call('extract', { html, opts });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  async close(): Promise<void> {
    const t = this.thread;
    this.thread = undefined;
    if (t) await t.terminate();
  }
}

class ThreadExtractor implements Extractor {
  private readonly lanes: Lane[];

  constructor(threads: number) {
    this.lanes = Array.from({ length: threads }, () => new Lane());
  }

  extract(html: string, opts: ExtractOptions): Promise<Extraction> {
    // The least busy thread; the page string is copied to it (~0.1 ms for 150 KB).
    let lane = this.lanes[0]!;
    for (const l of this.lanes) if (l.pending < lane.pending) lane = l;
    return lane.extract(html, opts);
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
  }
}
