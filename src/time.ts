/**
 * Time: the units, the UTC hour boundary, and the one clock the service reads when
 * time decides something (a rate window, a usage hour, a retention cutoff, a roll-up cutoff).
 * docs/ARCHITECTURE.md ("Time") says which reads go through the clock and which SQL uses now().
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The start of the UTC hour that `ms` falls in (ms since the epoch). */
export function hourStart(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** Where decisions read the time from: the application context's `clock` (src/context.ts). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The machine's clock: what every production process uses. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock `offsetMs` ahead of the machine's (behind when negative): moved time that still passes.
 * Tests use it to stand at a chosen point of the hour instead of waiting for it.
 */
export class OffsetClock implements Clock {
  constructor(public offsetMs = 0) {}

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves the clock so that now() is `ms` (and goes on from there). */
  set(ms: number): void {
    this.offsetMs = ms - Date.now();
  }

  /** Moves the clock on by `ms`. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
