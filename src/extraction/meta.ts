/**
 * Open Graph / Facebook product meta tags: `product:sale_price:amount` (a running sale) before
 * `product:price:amount` and `og:price:amount`; `product:original_price:amount` is a list price,
 * listed but not chosen. Currency from the matching `...:currency` tag, stock from
 * `product:availability` / `og:availability`.
 */
import { availabilityFromValue } from './availability.js';
import { normaliseCurrencyCode } from '../money/currency.js';
import type { PageScan } from './scan.js';
import { makeCandidate, quote, readMachinePrice, type SourceResult } from './source.js';
import type { Candidate } from './types.js';

const AMOUNTS: ReadonlyArray<{ key: string; currencyKey: string; ignored?: string }> = [
  { key: 'product:sale_price:amount', currencyKey: 'product:sale_price:currency' },
  { key: 'product:price:amount', currencyKey: 'product:price:currency' },
  { key: 'og:price:amount', currencyKey: 'og:price:currency' },
  { key: 'product:price', currencyKey: 'product:price:currency' },
  { key: 'og:price', currencyKey: 'og:price:currency' },
  {
    key: 'product:original_price:amount',
    currencyKey: 'product:original_price:currency',
    ignored: 'the original (list) price',
  },
];

export function fromMeta(scan: PageScan): SourceResult {
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  const ignored: Candidate[] = [];
  const valuesOf = (key: string): string[] => scan.metas.filter((m) => m.key === key).map((m) => m.content);
  const availability = ['product:availability', 'og:availability']
    .flatMap(valuesOf)
    .map(availabilityFromValue)
    .find((a) => a !== undefined);
  for (const { key, currencyKey, ignored: why } of AMOUNTS) {
    const currencies = valuesOf(currencyKey);
    valuesOf(key).forEach((content, i) => {
      const currency = normaliseCurrencyCode(currencies[i] ?? currencies[0]);
      const detail = `meta ${key}${i ? ` #${i + 1}` : ''}`;
      const read = readMachinePrice(content, currency);
      if (!read.ok) {
        notes.push(`${detail}: ${quote(content)} is not usable (${read.reason})`);
        return;
      }
      const c = makeCandidate({ source: 'meta', detail, raw: content, read, currency, availability, ignored: why });
      (c.ignored ? ignored : candidates).push(c);
    });
  }
  const first = candidates.find((c) => !c.ignored);
  return {
    candidates: [...candidates.filter((c) => !c.ignored), ...candidates.filter((c) => c.ignored), ...ignored],
    availability,
    currency:
      first?.currency ??
      normaliseCurrencyCode(valuesOf('product:price:currency')[0] ?? valuesOf('og:price:currency')[0]),
    notes,
    missing: first ? undefined : 'no price meta tags',
  };
}
