/**
 * Price extraction: a pure library (no I/O). `extractPrices` reads a fetched page;
 * `parsePrice` reads one price text. See docs/EXTRACTION.md for the rules.
 */
export { extractPrices } from './extract.js';
export { parsePrice, normalisePriceText } from './parse-price.js';
export type { ParsedPrice, PriceHints, PriceParseFailure, PriceParseResult } from './parse-price.js';
export type { Availability, Candidate, CandidateSource, ExtractOptions, Extraction, Period } from './types.js';
