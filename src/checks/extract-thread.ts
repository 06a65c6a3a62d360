/**
 * The extraction thread of src/checks/extractor.ts: reads pages with extractPrices and posts the
 * result back. The result is structured-cloned, which keeps `chosen` the same object as its
 * entry in `candidates`.
 */
import { parentPort } from 'node:worker_threads';
import { type ExtractOptions, type Extraction, extractPrices } from '../extraction/index.js';

export interface ExtractRequest {
  id: number;
  html: string;
  opts: ExtractOptions;
}

export type ExtractAnswer = { id: number; ok: true; extraction: Extraction } | { id: number; ok: false; message: string; stack?: string };

parentPort?.on('message', (m: ExtractRequest) => {
  let answer: ExtractAnswer;
  try {
    answer = { id: m.id, ok: true, extraction: extractPrices(m.html, m.opts) };
  } catch (err) {
    const e = err as Error;
    answer = { id: m.id, ok: false, message: String(e?.message ?? err), ...(e?.stack ? { stack: e.stack } : {}) };
  }
  parentPort!.postMessage(answer);
});
