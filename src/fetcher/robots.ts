/**
 * robots.txt (RFC 9309), fetched once per origin and cached:
 * - 2xx: the rules apply (the group for our token, else "*"); at most `maxBytes` are parsed.
 * - 4xx other than 429 ("unavailable"): everything is allowed.
 * - 429, 5xx, or unreachable (network error, timeout, refused address): everything is
 *   disallowed for a short while (`failureTtlMs`), then asked again.
 * Matching is robots-parser's: longest match wins, Allow wins ties, * and $ wildcards.
 */
import { createRequire } from 'node:module';
import { FetchError } from './types.js';

interface RobotsRules {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getMatchingLineNumber(url: string, ua?: string): number;
  getCrawlDelay(ua?: string): number | undefined;
}
// robots-parser is CommonJS with a default-export typing that NodeNext cannot call; load it plainly.
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => RobotsRules;

/** What fetching /robots.txt produced: a response (any status), or a failure to get one. */
export type RobotsResponse = { status: number; body: string } | { error: FetchError };

export interface RobotsCacheOptions {
  /** Our product token, matched against User-agent lines (case-insensitive). */
  token: string;
  /** Fetch an origin's /robots.txt (following redirects); never throws for HTTP statuses. */
  fetchRobots: (robotsUrl: URL, proxyUrl: string | null | undefined) => Promise<RobotsResponse>;
  /** How long a fetched robots.txt is used, in ms (default 1 h). */
  ttlMs?: number;
  /** How long "unreachable, so disallow" holds before asking again, in ms (default 60 s). */
  failureTtlMs?: number;
  /** Origins remembered (default 5 000). */
  maxEntries?: number;
  /** Called with a host's Crawl-delay (ms, capped) when a robots.txt names one for us. */
  onCrawlDelay?: (host: string, ms: number) => void;
  now?: () => number;
}

type Verdict =
  { kind: 'rules'; rules: RobotsRules } | { kind: 'allow-all'; why: string } | { kind: 'disallow-all'; why: string };

interface Entry {
  expires: number;
  verdict: Promise<Verdict>;
}

/** Crawl-delay is honoured up to this (a larger value would make a site uncheckable). */
const MAX_CRAWL_DELAY_MS = 60_000;

export class RobotsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly opts: Required<Omit<RobotsCacheOptions, 'onCrawlDelay'>> & Pick<RobotsCacheOptions, 'onCrawlDelay'>;

  constructor(opts: RobotsCacheOptions) {
    this.opts = {
      ...opts,
      ttlMs: opts.ttlMs ?? 3_600_000,
      failureTtlMs: opts.failureTtlMs ?? 60_000,
      maxEntries: opts.maxEntries ?? 5_000,
      now: opts.now ?? Date.now,
    };
  }

  /** Throws FetchError('robots_disallowed') when the origin's robots.txt forbids `url` to us. */
  async check(url: URL, signal?: AbortSignal, proxyUrl?: string | null): Promise<void> {
    const verdict = await abortable(this.verdictFor(url, proxyUrl), signal);
    if (verdict.kind === 'allow-all') return;
    const where = `${url.pathname}${url.search}`;
    if (verdict.kind === 'disallow-all') {
      throw new FetchError(
        'robots_disallowed',
        `robots.txt of ${url.host} ${verdict.why}, so nothing there is fetched for now (RFC 9309); it is asked again shortly`,
      );
    }
    if (verdict.rules.isAllowed(url.href, this.opts.token) === false) {
      const line = verdict.rules.getMatchingLineNumber(url.href, this.opts.token);
      throw new FetchError(
        'robots_disallowed',
        `robots.txt of ${url.host} disallows ${where} for ${this.opts.token}${line > 0 ? ` (line ${line})` : ''}; the listing can opt out of robots.txt if you may fetch it anyway`,
      );
    }
  }

  /** Forget every cached robots.txt. */
  clear(): void {
    this.entries.clear();
  }

  private verdictFor(url: URL, proxyUrl: string | null | undefined): Promise<Verdict> {
    const origin = url.origin;
    const now = this.opts.now();
    const hit = this.entries.get(origin);
    if (hit && hit.expires > now) return hit.verdict;
    if (hit) this.entries.delete(origin);
    if (this.entries.size >= this.opts.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    // The fetch is shared by everyone asking about this origin meanwhile, so it does not die
    // with the first caller's signal (it has its own timeout); callers stop waiting on theirs.
    const entry: Entry = { expires: Number.POSITIVE_INFINITY, verdict: this.load(url, proxyUrl) };
    this.entries.set(origin, entry);
    entry.verdict.then(
      (v) => (entry.expires = this.opts.now() + (v.kind === 'disallow-all' ? this.opts.failureTtlMs : this.opts.ttlMs)),
      () => this.entries.delete(origin),
    );
    return entry.verdict;
  }

  private async load(url: URL, proxyUrl: string | null | undefined): Promise<Verdict> {
    const robotsUrl = new URL('/robots.txt', url.origin);
    const res = await this.opts.fetchRobots(robotsUrl, proxyUrl);
    if ('error' in res) {
      const e = res.error;
      // The host is paused by an earlier Retry-After: say so, and ask again when it is over.
      if (e.retryAfterMs !== undefined) throw e;
      // Too many redirects counts as "unavailable" (RFC 9309 2.3.1.2): allow.
      if (e.code === 'too_many_redirects') return { kind: 'allow-all', why: 'redirects too often' };
      return { kind: 'disallow-all', why: `could not be read (${e.message})` };
    }
    if (res.status >= 200 && res.status < 300) {
      const rules = robotsParser(robotsUrl.href, res.body);
      const delay = rules.getCrawlDelay(this.opts.token);
      if (delay !== undefined && delay > 0 && this.opts.onCrawlDelay) {
        this.opts.onCrawlDelay(url.hostname, Math.min(delay * 1000, MAX_CRAWL_DELAY_MS));
      }
      return { kind: 'rules', rules };
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 429)
      return { kind: 'allow-all', why: `answered ${res.status}` };
    return { kind: 'disallow-all', why: `could not be read (the site answered ${res.status})` };
  }
}

/** `p`, or the signal's reason as soon as it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
