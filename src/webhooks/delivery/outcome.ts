import type { Database } from '../../db/types.js';
import { recordEvent } from '../../events/service.js';
import { redactedEndpointUrl } from '../secrets.js';
import { toWebhook } from '../sql.js';
import { retryAfterMs, retryDelay, type RetryRules } from './schedule.js';
import type { SendResult } from './send.js';
import {
  addRetry,
  type AttemptAnswer,
  attemptsSucceeded,
  type ClaimedEndpoint,
  disableEndpoint,
  endpointFailed,
  markAttemptFailed,
  type PendingAttempt,
} from './sql.js';

/** What becomes of an answered (or unanswered) attempt: docs/WEBHOOKS.md, "Delivery". */

export interface OutcomeRules extends RetryRules {
  /** An endpoint failing without a success for this long is disabled, in ms (WEBHOOK_DISABLE_AFTER). */
  disableAfterMs: number;
}

export interface AttemptOutcome {
  endpointId: string;
  attemptId: string;
  eventId: string;
  succeeded: boolean;
  status: number | null;
  /** The retry queued, in ms from now; undefined: none (success, or the schedule is exhausted). */
  retryInMs?: number;
  /** Why the endpoint was disabled by this attempt. */
  disabled?: string;
  /** The worker still holds the endpoint (only after a success). */
  held: boolean;
}

export const GONE_REASON = 'The endpoint answered 410 Gone';
export const disableAfterReason = (ms: number) => `No successful delivery for ${formatDuration(ms)}`;

function formatDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1_000, 'second'],
  ];
  for (const [size, name] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${name}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}

export const isSuccess = (r: SendResult) =>
  r.error === undefined && r.status !== undefined && r.status >= 200 && r.status < 300;

const answerOf = (result: SendResult): AttemptAnswer => ({
  status: result.status ?? null,
  durationMs: result.durationMs,
  body: result.body ?? null,
  error: result.error ?? null,
});

/**
 * Records 2xx answers of one endpoint's attempts, in one statement (the worker groups the
 * answers that come while the previous group is being written): succeeded, each at the time it
 * was answered; the endpoint up. `held`: the worker still holds the endpoint.
 */
export async function recordSuccesses(
  db: Database,
  o: {
    endpoint: ClaimedEndpoint;
    answered: readonly { attempt: PendingAttempt; result: SendResult; at: Date }[];
    workerId: string;
    leaseSeconds: number;
  },
): Promise<AttemptOutcome[]> {
  const rows = o.answered.map((x) => ({ attempt: x.attempt, answer: answerOf(x.result), at: x.at }));
  const held = await attemptsSucceeded(db, o.endpoint.id, rows, o.workerId, o.leaseSeconds);
  return o.answered.map((x) => ({
    endpointId: o.endpoint.id,
    attemptId: x.attempt.id,
    eventId: x.attempt.event_id,
    status: x.result.status ?? null,
    succeeded: true,
    held,
  }));
}

/**
 * Records an attempt that did not succeed, in one transaction: the attempt failed; the next
 * one queued at the following step of the schedule (never before the answer's Retry-After)
 * unless the schedule is exhausted; the endpoint down, probed next when that retry is due, and
 * given back; disabled with an `endpoint.disabled` event on a 410 or when it has been failing
 * for WEBHOOK_DISABLE_AFTER.
 */
export async function recordFailure(
  db: Database,
  o: { endpoint: ClaimedEndpoint; attempt: PendingAttempt; result: SendResult; workerId: string; rules: OutcomeRules },
): Promise<AttemptOutcome> {
  const { endpoint, attempt, result } = o;
  const answer = answerOf(result);
  const base = { endpointId: endpoint.id, attemptId: attempt.id, eventId: attempt.event_id, status: answer.status };
  const pause = retryAfterMs(result.retryAfter);
  return db.transaction(async (tx) => {
    const outcome: AttemptOutcome = { ...base, succeeded: false, held: false };
    // Already recorded by a worker that took the endpoint after this one's lease ran out.
    if (!(await markAttemptFailed(tx, attempt, answer))) return outcome;
    const delay = retryDelay(o.rules, attempt.retry, pause);
    if (delay !== undefined) {
      await addRetry(tx, attempt, delay);
      outcome.retryInMs = delay;
    }
    // Exhausted: the next attempt in the queue is the next probe, at once (or after Retry-After).
    const overdue = await endpointFailed(tx, endpoint.id, o.workerId, delay ?? pause ?? 0, o.rules.disableAfterMs);
    const reason =
      result.status === 410 ? GONE_REASON : overdue ? disableAfterReason(o.rules.disableAfterMs) : undefined;
    if (reason !== undefined) {
      const row = await disableEndpoint(tx, endpoint.id, reason);
      if (row) {
        await recordEvent(tx, row.account_id, 'endpoint.disabled', {
          ...toWebhook(row),
          url: redactedEndpointUrl(row.url),
        });
        outcome.disabled = reason;
      }
    }
    return outcome;
  });
}
