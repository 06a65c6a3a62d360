import { ApiError, ph } from './api';

/**
 * Where each product stands (design/API.md "Positions"): `GET /api/v1/positions` and
 * `/positions/summary`, through the session's typed client like every other call. The shapes
 * here are the contract's names; until the OpenAPI document carries those paths (they land with
 * the positions API), the client is asked with the path as a string, and a server without them
 * answers 404, which the pages show as "positions are not available here yet" (`unavailable`).
 */

export interface PositionRow {
  product_id: string;
  name: string;
  sku: string | null;
  own_price: number | null;
  currency: string;
  rank: number | null;
  of: number;
  price_index: number | null;
  cheapest: { competitor_id: string; name: string; price: number } | null;
  gap_amount: number | null;
  gap_percent: number | null;
  undercut_by: number;
  changed_at: string | null;
}

export interface HistogramBin {
  from: number;
  to: number;
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

export interface PositionQuery {
  undercut?: boolean;
  rank_min?: number;
  rank_max?: number;
  competitor_id?: string;
  gap_percent_min?: number;
  gap_percent_max?: number;
  brand?: string;
  category?: string;
  q?: string;
  sort?: string;
  limit?: number;
  cursor?: string;
}

export const POSITION_SORTS: [string, string][] = [
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

/**
 * The session's client, its GET taking these paths as strings (see above). Once the positions
 * API is in the OpenAPI document, `ph.GET` types them and this goes.
 */
interface UntypedGet {
  GET(path: string, init: { params?: { query?: Record<string, unknown> }; signal?: AbortSignal }): Promise<unknown>;
}
const untyped = ph as unknown as UntypedGet;

/** True when the error says this server has no positions API (a 404 for the path itself). */
export const unavailable = (err: unknown) => err instanceof ApiError && err.status === 404;

export async function listPositions(query: PositionQuery, signal?: AbortSignal): Promise<{ data: PositionRow[]; pagination: { has_more: boolean; next_cursor: string | null } }> {
  const clean = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''));
  return (await untyped.GET('/api/v1/positions', { params: { query: clean }, signal })) as { data: PositionRow[]; pagination: { has_more: boolean; next_cursor: string | null } };
}

/** The summary, its histogram read whichever way its bins are named (`from`/`to`, `min`/`max`, `lower`/`upper`). */
export async function positionSummary(signal?: AbortSignal): Promise<PositionSummary> {
  const raw = (await untyped.GET('/api/v1/positions/summary', { signal })) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0));
  const bins = (raw.histogram ?? raw.price_index_histogram ?? []) as Record<string, unknown>[];
  return {
    cheapest: n(raw.cheapest),
    in_between: n(raw.in_between ?? raw.middle),
    dearest: n(raw.dearest ?? raw.most_expensive),
    alone: n(raw.alone),
    undercut: n(raw.undercut),
    histogram: Array.isArray(bins)
      ? bins.map((b) => ({ from: n(b.from ?? b.min ?? b.lower), to: n(b.to ?? b.max ?? b.upper), count: n(b.count) }))
      : [],
  };
}
