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

/**
 * The names canonicalTimeZone has answered: building an Intl.DateTimeFormat costs ~0.3 ms, 5 % of
 * a year of history's CPU (docs/BENCHMARKS.md). Bounded, since ICU takes any mix of cases of a
 * name: past the bound, names are looked up each time as before.
 */
const canonicalZones = new Map<string, string>();
const CANONICAL_ZONES_MAX = 2000;

/**
 * The canonical IANA name of a zone Node's ICU data knows, or undefined. The canonical name
 * (`CET` -> `Europe/Brussels`) is what goes to PostgreSQL, which would read a few zone names
 * (CET, EST) as fixed-offset abbreviations instead.
 */
export function canonicalTimeZone(name: string): string | undefined {
  const known = canonicalZones.get(name);
  if (known) return known;
  if (!/^[A-Za-z][A-Za-z0-9_+/-]*$/.test(name)) return undefined;
  try {
    const canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    if (canonicalZones.size < CANONICAL_ZONES_MAX) canonicalZones.set(name, canonical);
    return canonical;
  } catch {
    return undefined;
  }
}

/** The instants over which wholeHourZone checks a zone's offsets: 1970 to 2100. */
export const WHOLE_HOUR_SPAN = { from: Date.parse('1970-01-01T00:00:00Z'), to: Date.parse('2100-01-01T00:00:00Z') };

/**
 * Whether `tz`'s offset from UTC is a whole number of hours at noon UTC of every day of
 * WHOLE_HOUR_SPAN (Node's zone data; no zone kept another offset for less than a day): then every
 * local day of that span is a union of whole UTC hours.
 */
export function wholeHourZone(tz: string): boolean {
  const f = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' });
  for (let t = WHOLE_HOUR_SPAN.from + DAY_MS / 2; t < WHOLE_HOUR_SPAN.to; t += DAY_MS) {
    const name = f.formatToParts(t).find((x) => x.type === 'timeZoneName')?.value ?? '';
    if (!/^GMT([+-]\d\d:00)?$/.test(name)) return false;
  }
  return true;
}
