/**
 * Politeness per domain (host name), per process: at most `concurrency` requests in flight to
 * one host, request starts at least `delayMs` apart, and a host that answered 429/503 with
 * Retry-After (or asked for a Crawl-delay) gets nothing before then. Waiters are served in
 * arrival order (FIFO per host); hosts do not wait for each other.
 */
import { FetchError } from './types.js';

export interface DomainLimiterOptions {
  concurrency: number;
  delayMs: number;
  /**
   * Longest a request waits for its turn, in ms (default 60 s). A host paused by Retry-After for
   * longer than this refuses at once (FetchError 'http_error' with status 429/503 and
   * `retryAfterMs`), so checks fail fast and the scheduler retries later.
   */
  maxWaitMs?: number;
  now?: () => number;
}

interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: unknown) => void;
  cleanup: () => void;
}

interface HostState {
  active: number;
  queue: Waiter[];
  /** Earliest time the next request may start (delay since the last start). */
  nextStart: number;
  /** Retry-After / Crawl-delay pause: nothing starts before this. */
  pausedUntil: number;
  pauseStatus: number;
  /** Extra gap between starts asked by robots.txt (Crawl-delay), in ms. */
  minDelayMs: number;
  timer: NodeJS.Timeout | undefined;
  timerAt: number;
}

export class DomainLimiter {
  private readonly hosts = new Map<string, HostState>();
  private readonly concurrency: number;
  private readonly delayMs: number;
  private readonly maxWaitMs: number;
  private readonly now: () => number;
  private sweepCounter = 0;

  constructor(opts: DomainLimiterOptions) {
    this.concurrency = Math.max(1, opts.concurrency);
    this.delayMs = Math.max(0, opts.delayMs);
    this.maxWaitMs = opts.maxWaitMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  private state(host: string): HostState {
    let s = this.hosts.get(host);
    if (!s) {
      if (++this.sweepCounter >= 1024) this.sweep();
      s = {
        active: 0,
        queue: [],
        nextStart: 0,
        pausedUntil: 0,
        pauseStatus: 0,
        minDelayMs: 0,
        timer: undefined,
        timerAt: 0,
      };
      this.hosts.set(host, s);
    }
    return s;
  }

  /** Forget idle hosts whose delays and pauses have passed, so the map stays small. */
  private sweep(): void {
    this.sweepCounter = 0;
    const now = this.now();
    for (const [host, s] of this.hosts) {
      if (s.active === 0 && s.queue.length === 0 && s.nextStart <= now && s.pausedUntil <= now && s.minDelayMs === 0) {
        this.hosts.delete(host);
      }
    }
  }

  /**
   * Wait for a turn at `host`; resolves with the function to call when the request is done.
   * Rejects with the signal's reason if it aborts while waiting, or with FetchError when the
   * wait would exceed maxWaitMs.
   */
  acquire(host: string, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const s = this.state(host);
    const now = this.now();
    if (s.pausedUntil - now > this.maxWaitMs) return Promise.reject(this.pausedError(host, s, now));
    if (s.queue.length === 0 && s.active < this.concurrency && Math.max(s.nextStart, s.pausedUntil) <= now) {
      return Promise.resolve(this.start(host, s, now));
    }
    return new Promise((resolve, reject) => {
      const remove = (): void => {
        const i = s.queue.indexOf(waiter);
        if (i >= 0) s.queue.splice(i, 1);
        waiter.cleanup();
        this.pump(host, s);
      };
      const onAbort = (): void => {
        remove();
        reject(signal!.reason);
      };
      const waitTimer = setTimeout(() => {
        remove();
        reject(
          new FetchError(
            'timeout',
            `waited more than ${Math.round(this.maxWaitMs / 1000)} s for a turn at ${host} (too many checks of one site at once)`,
          ),
        );
      }, this.maxWaitMs);
      waitTimer.unref();
      const waiter: Waiter = {
        resolve,
        reject,
        cleanup: () => {
          signal?.removeEventListener('abort', onAbort);
          clearTimeout(waitTimer);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      s.queue.push(waiter);
      this.pump(host, s);
    });
  }

  private start(host: string, s: HostState, now: number): () => void {
    s.active++;
    s.nextStart = now + Math.max(this.delayMs, s.minDelayMs);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      s.active--;
      this.pump(host, s);
    };
  }

  private pump(host: string, s: HostState): void {
    while (s.queue.length > 0 && s.active < this.concurrency) {
      const now = this.now();
      const at = Math.max(s.nextStart, s.pausedUntil);
      if (at > now) {
        this.wakeAt(host, s, at);
        return;
      }
      const w = s.queue.shift()!;
      w.cleanup();
      w.resolve(this.start(host, s, now));
    }
  }

  private wakeAt(host: string, s: HostState, at: number): void {
    if (s.timer && s.timerAt <= at) return;
    if (s.timer) clearTimeout(s.timer);
    s.timerAt = at;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      this.pump(host, s);
    }, at - this.now());
    s.timer.unref();
  }

  private pausedError(host: string, s: HostState, now: number): FetchError {
    const ms = s.pausedUntil - now;
    const status = s.pauseStatus || 429;
    return new FetchError(
      'http_error',
      `${host} asked us to wait (${status}, Retry-After) until ${new Date(Date.now() + ms).toISOString()}; not fetching before then`,
      status,
      { retryAfterMs: ms },
    );
  }

  /**
   * The request granted at `host` goes out now. The delay counts from here as well as from the
   * grant, so time spent between the two (a busy event loop, a browser starting) cannot shorten
   * the gap the site sees between requests.
   */
  markStarted(host: string): void {
    const s = this.hosts.get(host);
    if (s) s.nextStart = Math.max(s.nextStart, this.now() + Math.max(this.delayMs, s.minDelayMs));
  }

  /** Nothing starts at `host` for `ms` (a 429/503 with Retry-After). Pauses only extend. */
  pause(host: string, ms: number, status: number): void {
    const s = this.state(host);
    const until = this.now() + ms;
    if (until > s.pausedUntil) {
      s.pausedUntil = until;
      s.pauseStatus = status;
    }
    // Waiters already queued keep waiting (up to maxWaitMs) and start when the pause ends.
    if (s.queue.length > 0) this.wakeAt(host, s, Math.max(s.nextStart, s.pausedUntil));
  }

  /** Raise the gap between request starts at `host` (robots.txt Crawl-delay). */
  setMinDelay(host: string, ms: number): void {
    this.state(host).minDelayMs = ms;
  }

  /** ms until `host` is no longer paused by Retry-After (0 when not paused). */
  pausedFor(host: string): number {
    const s = this.hosts.get(host);
    return s ? Math.max(0, s.pausedUntil - this.now()) : 0;
  }

  /** Requests in flight and waiting at `host`. */
  stats(host: string): { active: number; queued: number } {
    const s = this.hosts.get(host);
    return { active: s?.active ?? 0, queued: s?.queue.length ?? 0 };
  }

  /** Reject every waiter (at shutdown) and stop all timers. */
  close(reason: unknown = new FetchError('network', 'the fetcher has been closed')): void {
    for (const s of this.hosts.values()) {
      if (s.timer) clearTimeout(s.timer);
      s.timer = undefined;
      for (const w of s.queue.splice(0)) {
        w.cleanup();
        w.reject(reason);
      }
    }
    this.hosts.clear();
  }
}
