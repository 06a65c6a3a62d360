/**
 * Fixed-window counters aligned to multiples of the window since the epoch (for one hour: the
 * top of the UTC hour).
 */
import { systemClock } from '../time.js';
export interface WindowState {
  /** Requests counted in this window (this one included, for a hit). */
  count: number;
  limit: number;
  remaining: number;
  /** Unix seconds when the window ends. */
  reset: number;
  allowed: boolean;
}

/** One counter: what it counts, its limit and its window length. */
export interface Window {
  key: string;
  limit: number;
  seconds: number;
}

export type Outcome = { blocked: WindowState; state?: undefined } | { blocked?: undefined; state: WindowState };

export interface RateLimiter {
  /**
   * If `guard` has reached its limit, answer `{ blocked }` and count nothing. Otherwise count one
   * request against `window` (`hit`) or just read it (`peek`). At most one round trip to the
   * store; answered without one (not a promise) when the limiter can: the in-memory counters
   * always, Redis for a hot key counting from a leased block. The request path then goes on
   * without a microtask hop (src/auth/hook.ts).
   */
  take(window: Window, guard: Window, mode: 'hit' | 'peek'): Outcome | Promise<Outcome>;
  /** Count one against `window` (failed authentications). */
  hit(window: Window): Promise<WindowState>;
  /** Work done so far, for /metrics (only limiters that lease counts from a shared store have it). */
  readonly stats?: { redisCalls: number; leasedCounts: number };
  close(): Promise<void>;
}

export function windowStart(nowMs: number, seconds: number): number {
  const w = seconds * 1000;
  return Math.floor(nowMs / w) * w;
}

export function stateOf(count: number, w: Window, startMs: number, counted = true): WindowState {
  return {
    count,
    limit: w.limit,
    remaining: Math.max(0, w.limit - count),
    reset: Math.floor(startMs / 1000) + w.seconds,
    allowed: counted ? count <= w.limit : count < w.limit,
  };
}

/** Counters in this process's memory: exact for one API process. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; end: number; count: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = systemClock.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private current(w: Window, create: boolean) {
    const start = windowStart(this.now(), w.seconds);
    const k = `${w.seconds}:${w.key}`;
    let c = this.windows.get(k);
    if (!c || c.start !== start) {
      c = { start, end: start + w.seconds * 1000, count: 0 };
      if (create) this.windows.set(k, c);
    }
    return c;
  }

  take(window: Window, guard: Window, mode: 'hit' | 'peek'): Outcome {
    const g = this.current(guard, false);
    if (g.count >= guard.limit) return { blocked: stateOf(g.count, guard, g.start) };
    const c = this.current(window, mode === 'hit');
    if (mode === 'hit') c.count++;
    return { state: stateOf(c.count, window, c.start, mode === 'hit') };
  }

  async hit(window: Window): Promise<WindowState> {
    const c = this.current(window, true);
    c.count++;
    return stateOf(c.count, window, c.start);
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, c] of this.windows) if (c.end <= now) this.windows.delete(k);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
