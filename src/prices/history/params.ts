import { ERRORS } from '../../http/errors.js';
import { DEFAULT_SPAN_MS, type HistoryCsvQuery, type Interval, MAX_SPAN_DAYS, MAX_SPAN_MS } from './schemas.js';
import { canonicalTimeZone } from '../../time.js';

export { canonicalTimeZone };

/** Which series a request asks for: null, every series of the product. */
export interface SeriesFilter {
  competitorIds: string[];
  own: boolean;
}

/** A history request's range and shape, checked: what the query builders take. */
export interface HistoryRange {
  from: Date;
  to: Date;
  interval: Interval;
  /** Canonical IANA name. */
  tz: string;
  series: SeriesFilter | null;
}

/** Instants outside this range are refused: no price history is that old, and PostgreSQL has no year 0. */
const EARLIEST = Date.parse('1970-01-01T00:00:00Z');
const LATEST = Date.parse('9000-01-01T00:00:00Z');

const invalid = (field: string, message: string) => ERRORS.invalidQuery([{ field, message }]);

/** `competitor_id` as sent: repeated, comma-separated or both. */
export function splitCompetitorParam(value: unknown): unknown {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  return list.flatMap((v) => (typeof v === 'string' ? v.split(',') : [v]));
}

export function seriesFilter(values: string[] | undefined): SeriesFilter | null {
  if (values === undefined || values.length === 0) return null;
  const set = new Set(values);
  return { own: set.has('own'), competitorIds: [...set].filter((v) => v !== 'own').sort() };
}

/** `from` and `to` as sent, each checked against [EARLIEST, LATEST); both named when both are wrong. */
function instants(q: HistoryCsvQuery): { from?: number; to?: number } {
  const out: { from?: number; to?: number } = {};
  const details = [];
  for (const field of ['from', 'to'] as const) {
    const text = q[field];
    if (text === undefined) continue;
    const t = Date.parse(text);
    if (!Number.isFinite(t) || t < EARLIEST || t >= LATEST)
      details.push({ field, message: 'must be between 1970-01-01 and 9000-01-01' });
    out[field] = t;
  }
  if (details.length > 0) throw ERRORS.invalidQuery(details);
  return out;
}

/** Checks what the schema cannot: the range, its span for the interval, the time zone. */
export function historyRange(q: HistoryCsvQuery, now = Date.now()): HistoryRange {
  const interval = (q.interval ?? 'day') as Interval;
  const tz = canonicalTimeZone(q.tz ?? 'UTC');
  if (!tz) throw invalid('tz', 'must be an IANA time zone name such as UTC or Europe/Berlin');
  const sent = instants(q);
  const to = sent.to ?? now;
  const from = sent.from ?? Math.max(EARLIEST, to - DEFAULT_SPAN_MS);
  if (from >= to) throw invalid('from', 'must be before to');
  if (to - from > MAX_SPAN_MS[interval]) {
    throw invalid(
      'from',
      `is too far before to: interval=${interval} answers at most ${MAX_SPAN_DAYS[interval]} days at a time`,
    );
  }
  return { from: new Date(from), to: new Date(to), interval, tz, series: seriesFilter(q.competitor_id) };
}
