import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import {
  type BatchOptions,
  inBatches,
  type ListingInput,
  type ListingsBatchResult,
  type PriceObservationInput,
  type PricesBatchResult,
  type ProductInput,
  type ProductsBatchResult,
} from './batches.js';
import { EtagCache } from './etag-cache.js';
import type { paths } from './openapi.js';
import type { ApiError, NetworkError } from './errors.js';
import { PAGE_SIZE_MAX } from './limits.js';
import { type RetryInfo, type RetryOptions, Transport, type Usage, type UsageAlert } from './transport.js';

export interface ClientOptions {
  /** Where the service runs, e.g. `http://127.0.0.1:8080` (paths start with `/api/v1`). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; a function is asked before every request (a key that changes, as a signed-in session's). */
  apiKey?: string | (() => string | null | undefined);
  /** Sent with every request. */
  headers?: Record<string, string>;
  /** Each attempt's limit, in ms (default 30 000; 0: none). For a limit on a whole call, pass `signal: AbortSignal.timeout(ms)`. */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Answer repeated GETs from 304s: `true` for a cache of 500 entries, or your own EtagCache. */
  etagCache?: boolean | EtagCache;
  usageAlert?: UsageAlert;
  /** Called before each retry (to log it, or count). */
  onRetry?: (info: RetryInfo) => void;
  /** Called with the key's hourly window whenever an answer's X-RateLimit-* change what `usage` holds. */
  onUsage?: (usage: Usage) => void;
  /** Called with the error of every call that fails (after its retries), before it is thrown: a 401 to sign out on, say. */
  onError?: (error: ApiError | NetworkError) => void;
  /** The fetch to send with (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
type OrUndefined<T> = [T] extends [never] ? undefined : T;
/** What a successful call resolves to: the body of its 2xx answer. */
export type SuccessData<P extends keyof paths, M extends HttpMethod, I = object> = OrUndefined<
  NonNullable<FetchResponse<paths[P][M] & Record<string | number, unknown>, I, MediaType>['data']>
>;

/** A method over every path that has it: the body of the success, or a thrown error. */
export type Method<M extends HttpMethod> = <
  P extends PathsWithMethod<paths, M>,
  I extends MaybeOptionalInit<paths[P], M>,
>(
  path: P,
  ...init: InitParam<I>
) => Promise<SuccessData<P, M, I>>;

type GetPath = PathsWithMethod<paths, 'get'>;
type PageShape = { data: readonly unknown[]; pagination: { next_cursor: string | null } };
/**
 * The paths whose GET answers a page: `{ data: [...], pagination: { next_cursor } }`, or may
 * (a product's price history is a page with `interval=raw`; ask for that when paginating it).
 */
export type ListPath = {
  [P in GetPath]: [Extract<SuccessData<P, 'get'>, PageShape>] extends [never] ? never : P;
}[GetPath];
export type ListItem<P extends ListPath> =
  Extract<SuccessData<P, 'get'>, PageShape> extends { data: readonly (infer T)[] } ? T : never;

export interface PricehoundClient {
  GET: Method<'get'>;
  POST: Method<'post'>;
  PUT: Method<'put'>;
  PATCH: Method<'patch'>;
  DELETE: Method<'delete'>;
  /**
   * Every item of a list, page after page (`for await`), following `pagination.next_cursor`.
   * Pages of `params.query.limit` items (default 100, the most a list answers): a request each.
   * Stop early (`break`) and no further page is asked for.
   */
  paginate<P extends ListPath>(
    path: P,
    ...init: InitParam<MaybeOptionalInit<paths[P], 'get'>>
  ): AsyncGenerator<ListItem<P>, void, undefined>;
  /** The same pages, each as its array of items (to write a page at a time, or count requests). */
  pages<P extends ListPath>(
    path: P,
    ...init: InitParam<MaybeOptionalInit<paths[P], 'get'>>
  ): AsyncGenerator<ListItem<P>[], void, undefined>;
  /** POST /api/v1/products/batch in batches of 1000, the per-item results merged (`index` over all `products`). */
  createProducts(products: readonly ProductInput[], options?: BatchOptions): Promise<ProductsBatchResult>;
  /** POST /api/v1/prices in batches of 1000, the per-item results merged (`index` over all `observations`). */
  ingestPrices(observations: readonly PriceObservationInput[], options?: BatchOptions): Promise<PricesBatchResult>;
  /** POST /api/v1/listings/batch in batches of 1000, the per-item results merged (`index` over all `listings`). */
  createListings(listings: readonly ListingInput[], options?: BatchOptions): Promise<ListingsBatchResult>;
  /** The key's hourly window from the answers' X-RateLimit-* (the lowest remaining of the newest window); undefined before the first. */
  readonly usage: Usage | undefined;
  /** The ETag cache, when enabled. */
  readonly etagCache: EtagCache | undefined;
  /** The openapi-fetch client underneath (same transport), for the whole `{ data, response }`. */
  readonly raw: Client<paths>;
}

export function createClient(options: ClientOptions): PricehoundClient {
  const etagCache = options.etagCache === true ? new EtagCache() : options.etagCache || undefined;
  const transport = new Transport({
    fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: { maxAttempts: 5, baseDelayMs: 500, maxWaitMs: 60_000, ...options.retry },
    etagCache,
    usageAlert: options.usageAlert,
    onRetry: options.onRetry,
    onUsage: options.onUsage,
    onError: options.onError,
  });
  const { apiKey } = options;
  const keyed =
    typeof apiKey === 'function'
      ? (request: Request) => {
          const key = apiKey();
          if (key && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${key}`);
          return transport.send(request);
        }
      : transport.send;
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      ...options.headers,
      ...(typeof apiKey === 'string' && apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    fetch: keyed,
  });
  // The transport throws for every answer that is not a success, so `data` is the success's body.
  const method =
    <M extends HttpMethod>(m: M) =>
    async (path: string, init?: object) =>
      (await raw.request(m as never, path as never, init as never)).data;
  const api = {
    GET: method('get'),
    POST: method('post'),
    PUT: method('put'),
    PATCH: method('patch'),
    DELETE: method('delete'),
  } as unknown as Pick<PricehoundClient, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>;
  async function* pages(path: string, init?: { params?: { query?: Record<string, unknown> } }) {
    let cursor: string | undefined;
    do {
      const query = { limit: PAGE_SIZE_MAX, ...init?.params?.query, ...(cursor ? { cursor } : {}) };
      const page = (await api.GET(
        path as ListPath,
        { ...init, params: { ...init?.params, query } } as never,
      )) as unknown as {
        data: unknown[];
        pagination: { next_cursor: string | null };
      };
      yield page.data;
      cursor = page.pagination.next_cursor ?? undefined;
    } while (cursor);
  }
  const client: Omit<PricehoundClient, 'paginate' | 'pages'> & { paginate: unknown; pages: unknown } = {
    ...api,
    pages,
    async *paginate(path: string, init?: { params?: { query?: Record<string, unknown> } }) {
      for await (const page of pages(path, init)) yield* page;
    },
    createProducts: (products, options = {}) =>
      inBatches(products, options, (batch, atomic, signal) =>
        api.POST('/api/v1/products/batch', {
          body: { products: batch as ProductInput[], ...(atomic === undefined ? {} : { atomic }) },
          signal,
        }),
      ),
    ingestPrices: (observations, options = {}) =>
      inBatches(observations, options, (batch, atomic, signal) =>
        api.POST('/api/v1/prices', {
          body: { observations: batch as PriceObservationInput[], ...(atomic === undefined ? {} : { atomic }) },
          signal,
        }),
      ),
    createListings: (listings, options = {}) =>
      inBatches(listings, options, (batch, atomic, signal) =>
        api.POST('/api/v1/listings/batch', {
          body: { listings: batch as ListingInput[], ...(atomic === undefined ? {} : { atomic }) },
          signal,
        }),
      ),
    get usage() {
      return transport.usage;
    },
    etagCache,
    raw,
  };
  return client as unknown as PricehoundClient;
}

/** The first `max` items of `items` (a `paginate`), asking for no page beyond them. */
export async function take<T>(items: AsyncIterable<T>, max: number): Promise<T[]> {
  const out: T[] = [];
  if (max <= 0) return out;
  for await (const item of items) {
    out.push(item);
    if (out.length >= max) break;
  }
  return out;
}
