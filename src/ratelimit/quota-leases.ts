/**
 * Quota leases: this process's share of hot keys' hourly counters (see RedisRateLimiter).
 *
 * A key this process saw at least HOT_PER_SECOND times in the previous second asks Redis for
 * blocks of counts instead of one count per request, sized to about a quarter of a second of its
 * traffic (at most LEASE_MAX, and Redis gives at most 1/32 of what is left of the limit, so none
 * near it), the next block asked for while half of the last is still unused. Requests take their
 * counts from the blocks without a round trip. The counts
 * are still Redis's: every count from 1 up is handed out once, across all processes, so a
 * request's X-RateLimit-Remaining is unique and the limit is never exceeded. A block left unused
 * for RETURN_AFTER_MS goes back to Redis (its free list), where requests past the limit find it.
 */
import { systemClock } from '../time.js';
export const HOT_PER_SECOND = 20;
export const LEASE_MAX = 32;
export const RETURN_AFTER_MS = 1_000;

interface Block {
  next: number;
  last: number;
}

interface KeyTraffic {
  /** The second (Date.now() / 1000, floored) `count` belongs to. */
  second: number;
  count: number;
  /** Requests in the second before `second`. */
  previous: number;
  /** Counts this process holds, oldest block first. */
  blocks: Block[];
  usedAt: number;
  /** The block being asked for: requests that find none left wait for it. */
  refill: Promise<void> | undefined;
  /** Redis gave a single count: the limit is near, every request asks Redis from now on. */
  near: boolean;
  /** End of the key's window (ms): no count of it is worth anything after that. */
  windowEnd: number;
}

export interface UnusedBlock {
  key: string;
  next: number;
  last: number;
  windowEnd: number;
}

export class LeaseBook {
  private readonly keys = new Map<string, KeyTraffic>();

  constructor(private readonly now: () => number = systemClock.now) {}

  /** Notes one request for `key` (a counter's Redis key, window included). */
  note(key: string, windowEnd: number): void {
    const sec = Math.floor(this.now() / 1000);
    let t = this.keys.get(key);
    if (!t) {
      t = { second: sec, count: 0, previous: 0, blocks: [], usedAt: 0, refill: undefined, near: false, windowEnd };
      this.keys.set(key, t);
    }
    if (t.second !== sec) {
      t.previous = t.second === sec - 1 ? t.count : 0;
      t.second = sec;
      t.count = 0;
    }
    t.count++;
  }

  /** The next count this process holds for `key`, or undefined when it holds none. */
  take(key: string): number | undefined {
    const t = this.keys.get(key);
    const b = t?.blocks[0];
    if (!b) return undefined;
    const n = b.next++;
    if (b.next > b.last) t.blocks.shift();
    t.usedAt = this.now();
    return n;
  }

  /**
   * How many counts to ask Redis for now, ahead of need: a block of about a quarter of a second
   * of the key's traffic, asked for when what is held falls below half of that, one at a time.
   * 0 when the key is not hot, enough is held, or a block is already being asked for.
   */
  refillSize(key: string): number {
    const t = this.keys.get(key);
    if (!t || t.refill || t.near || t.previous < HOT_PER_SECOND) return 0;
    const size = Math.min(LEASE_MAX, Math.ceil(t.previous / 4));
    return this.unused(key) * 2 < size ? size : 0;
  }

  /** The block being asked for `key`, if any. */
  refilling(key: string): Promise<void> | undefined {
    return this.keys.get(key)?.refill;
  }

  setRefill(key: string, refill: Promise<void> | undefined): void {
    const t = this.keys.get(key);
    if (t) t.refill = refill;
  }

  /** Redis handed this process counts `first`..`last` of `key`. */
  granted(key: string, first: number, last: number): void {
    const t = this.keys.get(key);
    if (!t) return;
    t.blocks.push({ next: first, last });
    if (last === first) t.near = true;
    if (t.usedAt === 0) t.usedAt = this.now();
  }

  /** Counts of `key` this process holds and has not handed out. */
  unused(key: string): number {
    const blocks = this.keys.get(key)?.blocks ?? [];
    return blocks.reduce((sum, b) => sum + b.last - b.next + 1, 0);
  }

  /**
   * Removes and returns the blocks of keys unused for RETURN_AFTER_MS (all of them with `all`),
   * and forgets keys that have been quiet for a second or whose window is over.
   */
  sweep(all = false): UnusedBlock[] {
    const now = this.now();
    const sec = Math.floor(now / 1000);
    const out: UnusedBlock[] = [];
    for (const [key, t] of this.keys) {
      const over = t.windowEnd <= now;
      if (t.blocks.length > 0 && (all || over || now - t.usedAt >= RETURN_AFTER_MS)) {
        if (!over) for (const b of t.blocks) out.push({ key, next: b.next, last: b.last, windowEnd: t.windowEnd });
        t.blocks = [];
      }
      if (t.blocks.length === 0 && !t.refill && (over || t.second < sec - 1)) this.keys.delete(key);
    }
    return out;
  }

  /** Forgets everything (Redis is unreachable: its counts are no longer ours to hand out). */
  clear(): void {
    this.keys.clear();
  }

  get size(): number {
    return this.keys.size;
  }
}
