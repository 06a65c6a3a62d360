import { setTimeout as wait } from 'node:timers/promises';

/**
 * For tests that spend a whole hourly rate-limit window: if the top of the UTC hour is less than
 * `seconds` away, wait until it has passed, so the window cannot reset in the middle of the test
 * (it did at 17:00:00 once, and request 1001 was answered instead of refused). A wait for the
 * clock, not for an event: there is nothing to await instead.
 */
export async function clearOfHourBoundary(seconds = 120): Promise<void> {
  const hourMs = 3_600_000;
  const untilNext = hourMs - (Date.now() % hourMs);
  if (untilNext < seconds * 1000) await wait(untilNext + 50);
}
