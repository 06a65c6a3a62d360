/**
 * The contract between the page fetcher (src/fetcher) and its users (checks, the extract dry
 * run, webhooks later). Implementations: the HTTP fetcher (undici) and the browser fetcher
 * (playwright-core driving the system's Chromium, for listings with render_js).
 */
export interface FetchRequest {
  url: string;
  /** HTTP(S) proxy to send the request through (a competitor's proxy_url). */
  proxyUrl?: string | null;
  /** Honour robots.txt (a listing may opt out). */
  respectRobots: boolean;
  /** Render with a real browser (listings with render_js). */
  renderJs?: boolean;
  signal?: AbortSignal;
}

export interface FetchResult {
  url: string;
  /** After redirects. */
  finalUrl: string;
  status: number;
  contentType: string | null;
  /** Decoded text of the body (charset from the headers or the document). */
  body: string;
  /** Bytes received on the wire (after decompression: the decoded size). */
  bytes: number;
  redirects: string[];
  ms: number;
  /** The encoding the body was decoded from (WHATWG name, e.g. "utf-8", "windows-1252"). */
  charset?: string;
}

export const FETCH_ERROR_CODES = [
  'invalid_url',
  'blocked_address',
  'dns_failed',
  'robots_disallowed',
  'timeout',
  'too_large',
  'too_many_redirects',
  'http_error',
  'network',
  'unsupported_content',
  'browser_unavailable',
] as const;
export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[number];

/** Why a page could not be fetched; `message` is meant for the user who set up the listing. */
export class FetchError extends Error {
  /**
   * When the site asked us to come back later (429/503 with Retry-After, or a host still
   * paused by an earlier one): how long from now, in ms. Schedulers should not retry sooner.
   */
  readonly retryAfterMs?: number;

  constructor(
    readonly code: FetchErrorCode,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'FetchError';
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** Whether render_js fetches can run: a Chromium to start, and the last start worked. */
export interface BrowserAvailability {
  available: boolean;
  /** The executable used (or that would be used). */
  path?: string;
  /** Why not available. */
  reason?: string;
}

export interface Fetcher {
  fetch(req: FetchRequest): Promise<FetchResult>;
  close(): Promise<void>;
  /** For readiness: whether this fetcher can render pages in a browser (absent: it cannot). */
  browserAvailable?(): Promise<BrowserAvailability>;
}
