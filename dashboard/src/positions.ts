import type { components, operations } from '@pricehound/client';
import { ApiError, ph } from './api';

/**
 * Where each product stands (design/API.md "Positions"): `GET /api/v1/positions` and
 * `/positions/summary`, through the session's typed client like every other call. The shapes
 * are the OpenAPI document's; a server without the positions API answers 404, which the pages
 * show as "positions are not available here yet" (`unavailable`).
 */

export type PositionRow = components['schemas']['Position'];
export type PositionSummaryBody = components['schemas']['PositionSummary'];

/** A bucket of the price-index histogram; `from`/`to` null: unbounded on that side. */
export interface HistogramBin {
  from: number | null;
  to: number | null;
  count: number;
}

export interface PositionSummary {
  cheapest: number;
  in_between: number;
  dearest: number;
  alone: number;
  undercut: number;
  histogram: HistogramBin[];
}

export type PositionQuery = NonNullable<operations['listPositions']['parameters']['query']>;

export const POSITION_SORTS: [NonNullable<PositionQuery['sort']>, string][] = [
  ['-gap_percent', 'Most undercut first (gap %)'],
  ['gap_percent', 'Cheapest against the market first (gap %)'],
  ['-gap_amount', 'Largest gap (amount) first'],
  ['rank', 'Rank, best first'],
  ['-rank', 'Rank, worst first'],
  ['-price_index', 'Price index, highest first'],
  ['price_index', 'Price index, lowest first'],
  ['name', 'Name A–Z'],
  ['-changed_at', 'Position changed most recently'],
];

/** How a product stands, as GET /positions?standing= selects and /positions/summary counts. */
export const POSITION_STANDINGS: [NonNullable<PositionQuery['standing']>, string][] = [
  ['cheapest', 'Cheapest (no competitor cheaper)'],
  ['in_between', 'In between (cheaper than some)'],
  ['dearest', 'Dearest (every competitor cheaper)'],
];

/** True when the error says this server has no positions API (a 404 for the path itself). */
export const unavailable = (err: unknown) => err instanceof ApiError && err.status === 404;

export async function listPositions(query: PositionQuery, signal?: AbortSignal) {
  const clean = Object.fromEntries(
    Object.entries(query).filter(([, v]) => v !== undefined && v !== ''),
  ) as PositionQuery;
  return ph.GET('/api/v1/positions', { params: { query: clean }, signal });
}

export async function positionSummary(signal?: AbortSignal): Promise<PositionSummary> {
  const s = await ph.GET('/api/v1/positions/summary', { signal });
  return {
    cheapest: s.cheapest,
    in_between: s.in_between,
    dearest: s.dearest,
    alone: s.alone,
    undercut: s.undercut,
    histogram: s.price_index_histogram,
  };
}
