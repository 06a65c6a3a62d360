import type { Queryable } from '../../db/types.js';
import { newId } from '../../ids.js';
import type { WebhookRow } from '../sql.js';

/**
 * Every statement of webhook delivery (docs/WEBHOOKS.md, "Delivery"). The queue is
 * webhook_deliveries itself (pending rows, filled by the events_fan_out trigger of
 * migrations/0004 and by redeliveries); a worker leases an ENDPOINT, not an attempt, so one
 * endpoint's attempts go out one at a time in the order of their events, and no two workers
 * send to one endpoint at once. While an endpoint is down (failing_since set) it is claimable
 * only from probe_at, and then sends just its oldest pending attempt.
 */

/** NOTIFY channel of migrations/0004: "new pending attempts". */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** What sending to an endpoint needs (read with each batch of its attempts). */
export interface ClaimedEndpoint {
  id: string;
  account_id: string;
  url: string;
  format: 'standard' | 'slack';
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Due: the endpoint is enabled, up or with its probe due, and the oldest attempt of its queue
 * (the one that must go first) is due, or the endpoint is up (a retry's time only paces the
 * probes of a down endpoint: one enabled again or given a new URL sends its backlog at once);
 * and, with `leaseFree`, nobody's lease on it is live.
 */
const due = (leaseFree: boolean) => `e.enabled
  ${leaseFree ? 'and (e.locked_by is null or e.locked_until <= now())' : ''}
  and (e.failing_since is null or e.probe_at is null or e.probe_at <= now())
  and coalesce((select d.next_attempt_at <= now() or e.failing_since is null from webhook_deliveries d
                 where d.endpoint_id = e.id and d.status = 'pending'
                 order by d.event_seq, d.id limit 1), false)`;

/**
 * Leases up to `limit` due endpoints to `workerId` for `leaseSeconds` and answers their ids, the
 * least recently served first (a release leaves locked_until at the time of release). SKIP LOCKED: concurrent claims
 * never wait for each other nor take one endpoint twice; a row claimed and committed after this
 * statement's snapshot is re-read by FOR UPDATE (READ COMMITTED), no longer due, and skipped.
 */
export async function claimEndpoints(
  db: Queryable,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `/* claimWebhookEndpoints */
     update webhook_endpoints w
        set locked_by = $1, locked_until = now() + make_interval(secs => $3::float8)
       from (select e.id from webhook_endpoints e
              where ${due(true)}
              order by e.locked_until nulls first
              limit $2
              for update skip locked) c
      where w.id = c.id
     returning w.id`,
    [workerId, limit, leaseSeconds],
  );
  return r.rows.map((row) => row.id);
}

/** A pending attempt with its event, and its endpoint as it is now (a rotation or a new URL applies from the next batch). */
export interface PendingAttempt {
  id: string;
  event_id: string;
  attempt: number;
  retry: number;
  due: boolean;
  type: string;
  data: Record<string, unknown>;
  event_created_at: Date;
  /** The row's partition key, event_created_at to the microsecond (a Date keeps milliseconds). */
  partition_key: string;
  endpoint: ClaimedEndpoint;
}

/**
 * The endpoint's oldest pending attempts, in the order of their events, while `workerId` holds
 * it and it is enabled (none otherwise). `due`: its time has come.
 */
export async function pendingAttempts(
  db: Queryable,
  endpointId: string,
  workerId: string,
  limit: number,
): Promise<PendingAttempt[]> {
  const r = await db.query<PendingAttempt>(
    `/* pendingWebhookAttempts */
     select d.id, d.event_id, d.attempt, d.retry, d.next_attempt_at <= now() or w.failing_since is null as due,
            ev.type, ev.data, ev.created_at as event_created_at, d.event_created_at::text as partition_key,
            json_build_object('id', w.id, 'account_id', w.account_id, 'url', w.url, 'format', w.format, 'secret', w.secret,
                              'previous_secret', w.previous_secret,
                              'previous_secret_expires_at', extract(epoch from w.previous_secret_expires_at) * 1000) as endpoint
       from webhook_deliveries d
       join events ev on ev.id = d.event_id and ev.created_at = d.event_created_at
       join webhook_endpoints w on w.id = d.endpoint_id and w.locked_by = $2 and w.enabled
      where d.endpoint_id = $1 and d.status = 'pending'
      order by d.event_seq, d.id
      limit $3`,
    [endpointId, workerId, limit],
  );
  for (const row of r.rows) {
    const ms = row.endpoint.previous_secret_expires_at as unknown as number | null;
    row.endpoint.previous_secret_expires_at = ms === null ? null : new Date(Number(ms));
  }
  return r.rows;
}

export interface AttemptAnswer {
  status: number | null;
  durationMs: number;
  body: string | null;
  error: string | null;
}

/**
 * 2xx answers: the attempts succeeded (each at the time it was answered), the endpoint is up,
 * and the lease runs on. One statement, one round trip, for any number of attempts of one
 * endpoint. Answers whether `workerId` still holds the endpoint and it is still enabled.
 */
export async function attemptsSucceeded(
  db: Queryable,
  endpointId: string,
  attempts: readonly { attempt: AttemptKey; answer: AttemptAnswer; at: Date }[],
  workerId: string,
  leaseSeconds: number,
): Promise<boolean> {
  const r = await db.query<{ id: string }>(
    `/* webhookAttemptsSucceeded */
     with done as (
       update webhook_deliveries d
          set status = 'succeeded', response_status = k.status, duration_ms = k.duration_ms, response_body = k.body, error = null,
              attempted_at = k.at, next_attempt_at = null
         from unnest($2::text[], $3::int[], $4::int[], $5::text[], $6::timestamptz[], $9::timestamptz[])
                as k (id, status, duration_ms, body, at, event_created_at)
        where d.id = k.id and d.event_created_at = k.event_created_at and d.status = 'pending'
       returning d.id)
     update webhook_endpoints
        set last_success_at = now(), failing_since = null, probe_at = null,
            locked_until = case when locked_by = $7 then now() + make_interval(secs => $8::float8) else locked_until end
      where id = $1
     returning id, locked_by = $7 and enabled as held`,
    [
      endpointId,
      attempts.map((a) => a.attempt.id),
      attempts.map((a) => a.answer.status),
      attempts.map((a) => Math.round(a.answer.durationMs)),
      attempts.map((a) => a.answer.body),
      attempts.map((a) => a.at.toISOString()),
      workerId,
      leaseSeconds,
      attempts.map((a) => a.attempt.partition_key),
    ],
  );
  return (r.rows[0] as { held?: boolean } | undefined)?.held === true;
}

/** An attempt as its row is found: by id and the partition key, so one partition is read. */
export type AttemptKey = Pick<PendingAttempt, 'id' | 'partition_key'>;

/**
 * Marks a pending attempt failed; false when it was no longer pending (another worker recorded
 * it after this one's lease ran out), in which case the caller adds nothing.
 */
export async function markAttemptFailed(db: Queryable, attempt: AttemptKey, a: AttemptAnswer): Promise<boolean> {
  const r = await db.query(
    `/* webhookAttemptFailed */
     update webhook_deliveries
        set status = 'failed', response_status = $2, duration_ms = $3, response_body = $4, error = $5,
            attempted_at = now(), next_attempt_at = null
      where id = $1 and event_created_at = $6 and status = 'pending'`,
    [attempt.id, a.status, a.durationMs, a.body, a.error, attempt.partition_key],
  );
  return r.rowCount > 0;
}

/** The next attempt after a failed one, `delayMs` from now, at the next step of the schedule. */
export async function addRetry(db: Queryable, failed: AttemptKey, delayMs: number): Promise<void> {
  await db.query(
    `/* addWebhookRetry */
     insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, retry, next_attempt_at)
     select $2, f.account_id, f.endpoint_id, f.event_id, f.event_seq, f.event_created_at,
            (select max(o.attempt) from webhook_deliveries o
              where o.endpoint_id = f.endpoint_id and o.event_id = f.event_id and o.event_created_at = f.event_created_at) + 1,
            'scheduled', f.retry + 1, now() + make_interval(secs => $3::float8 / 1000)
       from webhook_deliveries f
      where f.id = $1 and f.event_created_at = $4`,
    [failed.id, newId('whdl'), delayMs, failed.partition_key],
  );
}

/**
 * After a failure the endpoint is down (since the first failure without a success since): its
 * next probe goes out `probeInMs` from now, and the lease of `workerId` ends. Answers whether it
 * has been failing for at least `disableAfterMs`.
 */
export async function endpointFailed(
  db: Queryable,
  endpointId: string,
  workerId: string,
  probeInMs: number,
  disableAfterMs: number,
): Promise<boolean> {
  const r = await db.query<{ overdue: boolean }>(
    `/* webhookEndpointFailed */
     update webhook_endpoints
        set failing_since = coalesce(failing_since, now()),
            probe_at = now() + make_interval(secs => $3::float8 / 1000),
            locked_by = case when locked_by = $2 then null else locked_by end,
            locked_until = case when locked_by = $2 then now() else locked_until end
      where id = $1
     returning coalesce(failing_since, now()) <= now() - make_interval(secs => $4::float8 / 1000) as overdue`,
    [endpointId, workerId, probeInMs, disableAfterMs],
  );
  return r.rows[0]?.overdue === true;
}

/** The endpoint's row as the API reads it (no secret), and its account: for the endpoint.disabled event. */
export interface DisabledEndpoint extends WebhookRow {
  account_id: string;
}

/**
 * Disables an enabled endpoint for `reason`; its pending attempts stay pending (enabling it again
 * resumes them, from a clean state). Undefined when it was already disabled.
 */
export async function disableEndpoint(
  db: Queryable,
  endpointId: string,
  reason: string,
): Promise<DisabledEndpoint | undefined> {
  const r = await db.query<DisabledEndpoint>(
    `/* disableWebhookEndpoint */
     update webhook_endpoints
        set enabled = false, disabled_reason = $2, failing_since = null, probe_at = null,
            locked_by = null, locked_until = null, updated_at = now()
      where id = $1 and enabled
     returning id, account_id, url, description, event_types, format, enabled, disabled_reason, created_at, updated_at`,
    [endpointId, reason],
  );
  return r.rows[0];
}

/**
 * Gives the endpoint back unless it has a due attempt (then the holder carries on: an attempt
 * queued while it finished is not left behind). `held`: `workerId` held it when the statement
 * began; `released`: it no longer does.
 */
export async function releaseEndpoint(
  db: Queryable,
  endpointId: string,
  workerId: string,
): Promise<{ held: boolean; released: boolean }> {
  const r = await db.query<{ held: boolean; released: boolean }>(
    `/* releaseWebhookEndpoint */
     with e as (select e.id, e.locked_by = $2 as held, (${due(false)}) as more
                  from webhook_endpoints e where e.id = $1),
          r as (update webhook_endpoints w set locked_by = null, locked_until = now()
                  from e where w.id = e.id and w.locked_by = $2 and not e.more
                returning w.id)
     select coalesce((select held from e), false) as held, exists (select 1 from r) as released`,
    [endpointId, workerId],
  );
  return r.rows[0] ?? { held: false, released: true };
}

/**
 * Gives back those of `endpointIds` that `workerId` still holds, due or not: their serving was
 * cut short (the database went away), so nobody waits for their leases to run out. Answers how
 * many.
 */
export async function giveBackEndpoints(
  db: Queryable,
  endpointIds: readonly string[],
  workerId: string,
): Promise<number> {
  const r = await db.query(
    `/* giveBackWebhookEndpoints */
     update webhook_endpoints set locked_by = null, locked_until = now()
      where id = any($1::text[]) and locked_by = $2`,
    [endpointIds, workerId],
  );
  return r.rowCount;
}

/** Gives back every endpoint `workerId` holds (stopping), or, without it, every lease (start of the embedded database). */
export async function releaseAllEndpoints(db: Queryable, workerId?: string): Promise<number> {
  const r = await db.query(
    `/* releaseWebhookEndpoints */
     update webhook_endpoints set locked_by = null, locked_until = now()
      where locked_by is not null and ($1::text is null or locked_by = $1)`,
    [workerId ?? null],
  );
  return r.rowCount;
}

/**
 * In how many ms something may next become due that no NOTIFY announces: a down endpoint's
 * probe, a lease running out, a retry whose time comes. Null: nothing is waiting.
 */
export async function nextWakeInMs(db: Queryable): Promise<number | null> {
  const r = await db.query<{ ms: number | null }>(
    `/* nextWebhookWake */
     select (extract(epoch from min(greatest(
              case when w.failing_since is not null then w.probe_at end,
              case when w.locked_by is not null then w.locked_until end,
              d.at)) - now()) * 1000)::float8 as ms
       from webhook_endpoints w
       cross join lateral (select d.next_attempt_at as at from webhook_deliveries d
                            where d.endpoint_id = w.id and d.status = 'pending'
                            order by d.event_seq, d.id limit 1) d
      where w.enabled and d.at is not null`,
  );
  const ms = r.rows[0]?.ms ?? null;
  // Clamped here, not with greatest(0, ...) in SQL: greatest skips nulls, so "nothing is
  // waiting" (min over no rows) came out as 0, and an idle worker claimed again at once, forever.
  return ms === null ? null : Math.max(0, ms);
}
