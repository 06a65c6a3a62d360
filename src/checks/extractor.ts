import { Worker } from 'node:worker_threads';
import { type ExtractOptions, type Extraction, extractPrices } from '../extraction/index.js';
import type { ExtractRequest, ExtractAnswer } from './extract-thread.js';

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
 * The thread sits next to this file: extract-thread.js in dist. From source (tsx: tests, `npm run
 * dev`) it is extract-thread.ts, and a worker thread does not inherit tsx's loader, so it
 * registers it first (as src/db/pglite.ts does).
 */
function startThread(): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = new URL(`./extract-thread${fromSource ? '.ts' : '.js'}`, import.meta.url);
  if (!fromSource) return new Worker(url);
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`, { eval: true });
}

interface Pending {
  resolve: (x: Extraction) => void;
  reject: (e: Error) => void;
}

class Lane {
  private worker: Worker | undefined;
  readonly pending = new Map<number, Pending>();

  /** Started on first use; after a crash, started again by the next page. */
  send(msg: ExtractRequest, p: Pending): void {
    const w = (this.worker ??= this.start());
    this.pending.set(msg.id, p);
    w.ref(); // keep the process alive while an answer is awaited, not otherwise
    w.postMessage(msg);
  }

  private start(): Worker {
    const w = startThread();
    w.unref();
    w.on('message', (a: ExtractAnswer) => {
      const p = this.pending.get(a.id);
      if (!p) return;
      this.pending.delete(a.id);
      if (this.pending.size === 0) w.unref();
      if (a.ok) p.resolve(a.extraction);
      else p.reject(Object.assign(new Error(a.message), { name: 'ExtractionError', stack: a.stack }));
    });
    const fail = (err: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the extraction thread exited with code ${code}`)));
    return w;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

class ThreadExtractor implements Extractor {
  private readonly lanes: Lane[];
  private nextId = 1;

  constructor(threads: number) {
    this.lanes = Array.from({ length: threads }, () => new Lane());
  }

  extract(html: string, opts: ExtractOptions): Promise<Extraction> {
    // The least busy thread; the page string is copied to it (~0.1 ms for 150 KB).
    let lane = this.lanes[0]!;
    for (const l of this.lanes) if (l.pending.size < lane.pending.size) lane = l;
    const id = this.nextId++;
    return new Promise((resolve, reject) => lane.send({ id, html, opts }, { resolve, reject }));
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.close()));
  }
}
