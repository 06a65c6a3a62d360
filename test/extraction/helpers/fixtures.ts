import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Availability, Candidate, CandidateSource, ExtractOptions } from '../../../src/extraction/index.js';

export const PAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/pages');

export function page(name: string): string {
  return fs.readFileSync(path.join(PAGES_DIR, name), 'utf8');
}

/**
 * test/fixtures/pages/manifest.json: what each fixture page should extract to, so the scraper
 * tests that serve these pages can check the same expectations end to end.
 */
export interface ManifestCase {
  file: string;
  /** What the page is like (on the first entry of each file): the "Shape" of docs/EXTRACTION.md's coverage table. */
  shape?: string;
  title?: string;
  options?: ExtractOptions;
  expect: {
    chosen: { price: string; currency: string | null; source: CandidateSource } | null;
    availability: Availability;
    failure?: string;
    /** Every candidate in order: "source price currency" plus " ignored" when not choosable. */
    candidates: string[];
  };
}

export function manifest(): ManifestCase[] {
  return JSON.parse(fs.readFileSync(path.join(PAGES_DIR, 'manifest.json'), 'utf8')) as ManifestCase[];
}

export function summary(c: Candidate): string {
  return `${c.source} ${c.price} ${c.currency ?? '-'}${c.ignored ? ' ignored' : ''}`;
}
