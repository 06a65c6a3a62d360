/**
 * The extraction thread of src/checks/extractor.ts: reads pages with extractPrices and answers
 * with the result. The result is structured-cloned, which keeps `chosen` the same object as its
 * entry in `candidates`.
 */
import { parentPort } from 'node:worker_threads';
import { type ExtractOptions, type Extraction, extractPrices } from '../extraction/index.js';
import type { SerializedError } from '../threads/protocol.js';
import { serveThread } from '../threads/serve.js';

export interface ExtractMethods {
  extract(a: { html: string; opts: ExtractOptions }): Extraction;
}

const methods: ExtractMethods = {
  extract: ({ html, opts }) => extractPrices(html, opts),
};

/** A failed extraction reaches the caller as an ExtractionError with this thread's stack. */
function extractionError(err: unknown): SerializedError {
  const e = err as Error | undefined;
  return { message: String(e?.message ?? err), name: 'ExtractionError', stack: e?.stack || undefined };
}

if (parentPort) void serveThread(methods, { serializeError: extractionError });
