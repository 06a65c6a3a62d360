import { clearKey, getKey } from './session';

/** Every call goes to this origin's API (`vite dev` proxies it; CSP allows only 'self'). */
export const API_BASE = '/api/v1';

export interface ErrorDetail {
  field: string;
  message: string;
}

/** An API error answer (docs/API-DECISIONS.md, "Errors"), or the 429 body of the interface. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly details: ErrorDetail[] = [],
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The share of the hourly limit from which the dashboard warns (overview and header). */
export const NEAR_LIMIT = 0.8;

export interface RateLimit {
  limit: number;
  remaining: number;
  reset: number;
}

type RateListener = (r: RateLimit) => void;
const rateListeners = new Set<RateListener>();
/** Called with the X-RateLimit-* headers of every answer (the header's usage badge listens). */
export function onRateLimit(fn: RateListener): () => void {
  rateListeners.add(fn);
  return () => rateListeners.delete(fn);
}

let onUnauthorized: () => void = () => undefined;
/** What to do when the key stops working (revoked while signed in): sign out. */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export type Query = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export function queryString(q: Query | undefined): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const item of v) p.append(k, item);
    else p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: Query;
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** For POSTs that create: makes a retry after a lost answer safe (docs/API-DECISIONS.md, "Caching and retries"). */
  idempotencyKey?: string;
  /** Another key than the session's (sign-in tries one before keeping it). */
  key?: string;
}

/** The raw answer, with the key, rate-limit bookkeeping and errors handled. */
export async function request(path: string, opts: CallOptions = {}): Promise<Response> {
  const key = opts.key ?? getKey();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  const res = await fetch(API_BASE + path + queryString(opts.query), {
    method: opts.method ?? 'GET',
    headers,
    body: opts.body === undefined ? null : JSON.stringify(opts.body),
    signal: opts.signal ?? null,
    credentials: 'omit',
    cache: 'no-cache',
  });
  const limit = Number(res.headers.get('x-ratelimit-limit'));
  if (res.status !== 401 && Number.isFinite(limit) && res.headers.has('x-ratelimit-limit')) {
    const rate = { limit, remaining: Number(res.headers.get('x-ratelimit-remaining')), reset: Number(res.headers.get('x-ratelimit-reset')) };
    for (const fn of rateListeners) fn(rate);
  }
  if (res.ok) return res;
  const body = (await res.json().catch(() => null)) as {
    error?: string;
    code?: string;
    details?: ErrorDetail[];
    retry_after?: number;
  } | null;
  if (res.status === 401 && opts.key === undefined && key) {
    clearKey();
    onUnauthorized();
  }
  throw new ApiError(
    res.status,
    body?.error ?? `${res.status} ${res.statusText}`,
    body?.code ?? (res.status === 429 ? 'rate_limited' : 'unknown'),
    body?.details ?? [],
    body?.retry_after ?? null,
  );
}

/** JSON in, JSON out; 204 gives undefined. */
export async function api<T>(path: string, opts: CallOptions = {}): Promise<T> {
  const res = await request(path, opts);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export interface Page<T> {
  data: T[];
  pagination: { limit: number; has_more: boolean; next_cursor: string | null };
}

/** Every page of a list, up to `max` items. */
export async function all<T>(path: string, query: Query = {}, max = 1000, signal?: AbortSignal): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await api<Page<T>>(path, { query: { ...query, limit: 100, cursor }, signal });
    out.push(...page.data);
    cursor = page.pagination.has_more ? page.pagination.next_cursor : null;
  } while (cursor && out.length < max);
  return out;
}

export const newIdempotencyKey = () => `dash-${crypto.randomUUID()}`;
