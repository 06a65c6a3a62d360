import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import type { EventType } from '../events/schemas.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, timestampKey } from '../pagination/sort.js';
import type { MailEvent } from './render.js';
import type { Digest, EmailSubscription } from './schemas.js';

/**
 * Every query of email (migrations/0013): subscriptions, scoped by account; the events waiting
 * for their minute's mail; and the mail outbox the worker claims, sends and records.
 */

export interface SubscriptionRow {
  id: string;
  account_id: string;
  address: string;
  event_types: string[];
  digest: Digest;
  digest_hour: number;
  time_zone: string;
  confirmed_at: Date | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The secrets' side of a subscription: only the services read it. */
export interface SubscriptionStateRow extends SubscriptionRow {
  code_hash: string | null;
  code_failures: number;
  locked_at: Date | null;
  unsubscribe_nonce: string;
  unsubscribed_at: Date | null;
}

const COLUMNS =
  'id, account_id, address, event_types, digest, digest_hour, time_zone, confirmed_at, enabled, created_at, updated_at';
const STATE_COLUMNS = `${COLUMNS}, code_hash, code_failures, locked_at, unsubscribe_nonce, unsubscribed_at`;

export const toSubscription = (r: SubscriptionRow): EmailSubscription => ({
  object: 'email_subscription',
  id: r.id,
  address: r.address,
  event_types: r.event_types as EventType[],
  digest: r.digest,
  digest_hour: Number(r.digest_hour),
  time_zone: r.time_zone,
  confirmed_at: r.confirmed_at ? iso(r.confirmed_at) : null,
  enabled: r.enabled,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export interface NewSubscription {
  id: string;
  address: string;
  event_types: string[];
  digest: Digest;
  digest_hour: number;
  time_zone: string;
  enabled: boolean;
  code_hash: string;
  unsubscribe_nonce: string;
}

export async function insertSubscription(
  db: Queryable,
  accountId: string,
  s: NewSubscription,
): Promise<SubscriptionStateRow> {
  const r = await db.query<SubscriptionStateRow>(
    `/* insertEmailSubscription */
     insert into email_subscriptions (id, account_id, address, event_types, digest, digest_hour, time_zone, enabled, code_hash, unsubscribe_nonce)
     values ($1, $2, $3, $4::text[], $5, $6, $7, $8, $9, $10)
     returning ${STATE_COLUMNS}`,
    [
      s.id,
      accountId,
      s.address,
      s.event_types,
      s.digest,
      s.digest_hour,
      s.time_zone,
      s.enabled,
      s.code_hash,
      s.unsubscribe_nonce,
    ],
  );
  return r.rows[0]!;
}

/** `lock`: FOR UPDATE, for the confirm and unsubscribe transactions. */
export async function getSubscription(
  db: Queryable,
  accountId: string,
  id: string,
  lock = false,
): Promise<SubscriptionStateRow | undefined> {
  const r = await db.query<SubscriptionStateRow>(
    `/* getEmailSubscription */ select ${STATE_COLUMNS} from email_subscriptions where id = $1 and account_id = $2${lock ? ' for update' : ''}`,
    [id, accountId],
  );
  return r.rows[0];
}

/** By id alone: for the unsubscribe link, which carries no account. */
export async function getSubscriptionForToken(db: Queryable, id: string): Promise<SubscriptionStateRow | undefined> {
  const r = await db.query<SubscriptionStateRow>(
    `/* getEmailSubscriptionForToken */ select ${STATE_COLUMNS} from email_subscriptions where id = $1 for update`,
    [id],
  );
  return r.rows[0];
}

export const SUBSCRIPTION_SORTS = {
  created_at: timestampKey('created_at', (r: SubscriptionRow) => r.created_at),
} satisfies Record<string, SortKey<SubscriptionRow>>;

export async function listSubscriptions(
  db: Queryable,
  accountId: string,
  page: PageRequest<SubscriptionRow>,
): Promise<SubscriptionRow[]> {
  const { params, where } = accountWhere(accountId);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<SubscriptionRow>(
    `/* listEmailSubscriptions */ select ${COLUMNS} from email_subscriptions where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

export interface SubscriptionChanges {
  event_types?: string[] | undefined;
  digest?: Digest | undefined;
  digest_hour?: number | undefined;
  time_zone?: string | undefined;
  enabled?: boolean | undefined;
  /** A new confirmation round: confirmed_at cleared, this code's hash, the failures forgotten. */
  reconfirm?: { code_hash: string } | undefined;
}

export async function updateSubscription(
  db: Queryable,
  accountId: string,
  id: string,
  c: SubscriptionChanges,
): Promise<SubscriptionStateRow | undefined> {
  const params: unknown[] = [id, accountId];
  const sets: string[] = [];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (c.event_types !== undefined) set('event_types', c.event_types, '::text[]');
  if (c.digest !== undefined) set('digest', c.digest);
  if (c.digest_hour !== undefined) set('digest_hour', c.digest_hour);
  if (c.time_zone !== undefined) set('time_zone', c.time_zone);
  if (c.enabled !== undefined) set('enabled', c.enabled);
  if (c.reconfirm) {
    set('code_hash', c.reconfirm.code_hash);
    sets.push('confirmed_at = null', 'code_failures = 0', 'locked_at = null', 'unsubscribed_at = null');
  }
  if (sets.length === 0) return getSubscription(db, accountId, id);
  const r = await db.query<SubscriptionStateRow>(
    `/* updateEmailSubscription */
     update email_subscriptions set ${sets.join(', ')}, updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and account_id = $2
     returning ${STATE_COLUMNS}`,
    params,
  );
  return r.rows[0];
}

export async function deleteSubscription(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const r = await db.query(
    '/* deleteEmailSubscription */ delete from email_subscriptions where id = $1 and account_id = $2',
    [id, accountId],
  );
  return r.rowCount > 0;
}

/** A wrong code: one more failure; at `max` the subscription is locked for good. Returns the failures so far. */
export async function recordCodeFailure(db: Queryable, id: string, max: number): Promise<number> {
  const r = await db.query<{ code_failures: number }>(
    `/* recordEmailCodeFailure */
     update email_subscriptions
        set code_failures = code_failures + 1,
            locked_at = case when code_failures + 1 >= $2 then now() else locked_at end,
            code_hash = case when code_failures + 1 >= $2 then null else code_hash end
      where id = $1
     returning code_failures`,
    [id, max],
  );
  return Number(r.rows[0]!.code_failures);
}

export async function markConfirmed(db: Queryable, id: string): Promise<SubscriptionStateRow> {
  const r = await db.query<SubscriptionStateRow>(
    `/* markEmailSubscriptionConfirmed */
     update email_subscriptions
        set confirmed_at = now(), code_hash = null, code_failures = 0,
            updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1
     returning ${STATE_COLUMNS}`,
    [id],
  );
  return r.rows[0]!;
}

/**
 * The unsubscribe link's effect: disabled, and a new nonce so the link (and every older one)
 * works once. Only when the nonce is still `nonce`: of two clicks at once, one wins.
 */
export async function markUnsubscribed(db: Queryable, id: string, nonce: string, newNonce: string): Promise<boolean> {
  const r = await db.query(
    `/* markEmailUnsubscribed */
     update email_subscriptions
        set enabled = false, unsubscribed_at = now(), unsubscribe_nonce = $3,
            updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and unsubscribe_nonce = $2`,
    [id, nonce, newNonce],
  );
  return r.rowCount > 0;
}

/** Mails not yet sent to a subscription go when it is disabled or unsubscribed. */
export async function dropPendingMail(db: Queryable, subscriptionId: string): Promise<void> {
  await db.query(
    `/* dropPendingEmailMessages */ delete from email_messages where subscription_id = $1 and status = 'pending'`,
    [subscriptionId],
  );
  await db.query('/* dropPendingEmailEvents */ delete from email_pending_events where subscription_id = $1', [
    subscriptionId,
  ]);
}

// ---- The outbox ------------------------------------------------------------------------------

export interface NewMessage {
  id: string;
  account_id: string;
  subscription_id: string;
  kind: 'confirmation' | 'events' | 'digest';
  dedupe_key: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  unsubscribe_url: string | null;
}

/** Once per dedupe_key: false when that mail already exists. */
export async function insertMessage(db: Queryable, m: NewMessage): Promise<boolean> {
  const r = await db.query(
    `/* insertEmailMessage */
     insert into email_messages (id, account_id, subscription_id, kind, dedupe_key, recipient, subject, text_body, html_body, unsubscribe_url)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (dedupe_key) do nothing`,
    [
      m.id,
      m.account_id,
      m.subscription_id,
      m.kind,
      m.dedupe_key,
      m.recipient,
      m.subject,
      m.text_body,
      m.html_body,
      m.unsubscribe_url,
    ],
  );
  return r.rowCount > 0;
}

/** Wakes the email workers (LISTEN email_messages) when the transaction commits. */
export async function notifyEmailWorkers(db: Queryable): Promise<void> {
  await db.query(`/* notifyEmailWorkers */ select pg_notify('email_messages', '')`);
}

export interface MessageRow {
  id: string;
  subscription_id: string;
  kind: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
  unsubscribe_url: string | null;
  attempts: number;
}

/**
 * Leases up to `limit` due mails to `workerId` for `leaseMs` and counts the attempt. FOR UPDATE
 * SKIP LOCKED: several workers claim at once without taking the same mail; a mail whose lease
 * ran out (its worker died) is due again.
 */
export async function claimMessages(
  db: Queryable,
  workerId: string,
  leaseMs: number,
  limit: number,
): Promise<MessageRow[]> {
  const r = await db.query<MessageRow>(
    `/* claimEmailMessages */
     update email_messages m
        set locked_by = $1, locked_until = now() + $2::bigint * interval '1 millisecond', attempts = m.attempts + 1
      where m.id in (
        select id from email_messages
         where status = 'pending' and next_attempt_at <= now() and (locked_until is null or locked_until < now())
         order by next_attempt_at, id
         limit $3
           for update skip locked)
     returning m.id, m.subscription_id, m.kind, m.recipient, m.subject, m.text_body, m.html_body, m.unsubscribe_url, m.attempts`,
    [workerId, leaseMs, limit],
  );
  return r.rows.map((row) => ({ ...row, attempts: Number(row.attempts) }));
}

export async function markSent(db: Queryable, id: string, workerId: string): Promise<void> {
  await db.query(
    `/* markEmailSent */
     update email_messages set status = 'sent', sent_at = now(), locked_by = null, locked_until = null, last_error = null
      where id = $1 and locked_by = $2`,
    [id, workerId],
  );
}

/** A failed attempt: due again after `retryInMs`, or `failed` for good when that is null. */
export async function markAttemptFailed(
  db: Queryable,
  id: string,
  workerId: string,
  error: string,
  retryInMs: number | null,
): Promise<void> {
  await db.query(
    `/* markEmailAttemptFailed */
     update email_messages
        set status = case when $4::bigint is null then 'failed' else 'pending' end,
            next_attempt_at = case when $4::bigint is null then next_attempt_at else now() + $4::bigint * interval '1 millisecond' end,
            locked_by = null, locked_until = null, last_error = left($3, 1000)
      where id = $1 and locked_by = $2`,
    [id, workerId, error, retryInMs],
  );
}

/** The embedded database has one owner: leases left by a run that died are given back at start. */
/**
 * Gives back mails this worker claimed but did not try (a stopping worker): due again at once for
 * another worker, their claim not counted as an attempt. Returns how many.
 */
export async function releaseMessages(db: Queryable, workerId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.query(
    `/* giveBackEmailMessages */
     update email_messages set locked_by = null, locked_until = null, attempts = attempts - 1
      where id = any($1::text[]) and locked_by = $2 and status = 'pending'`,
    [ids, workerId],
  );
  return r.rowCount;
}

export async function releaseAllMessages(db: Queryable): Promise<number> {
  const r = await db.query(
    `/* releaseEmailMessages */ update email_messages set locked_by = null, locked_until = null where locked_by is not null`,
  );
  return r.rowCount;
}

/** Deletes up to `limit` sent or failed mails created before `cutoff`; returns how many. */
export async function deleteOldMessages(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const r = await db.query(
    `/* deleteOldEmailMessages */
     delete from email_messages where id in (
       select id from email_messages where status <> 'pending' and created_at < $1 order by created_at limit $2)`,
    [cutoff.toISOString(), limit],
  );
  return r.rowCount;
}

/** Most recent mails of a subscription (tests, support). */
export async function messagesOf(
  db: Queryable,
  subscriptionId: string,
): Promise<{ id: string; kind: string; status: string; attempts: number; last_error: string | null }[]> {
  const r = await db.query<{ id: string; kind: string; status: string; attempts: number; last_error: string | null }>(
    `/* emailMessagesOf */ select id, kind, status, attempts, last_error from email_messages where subscription_id = $1 order by created_at, id`,
    [subscriptionId],
  );
  return r.rows.map((m) => ({ ...m, attempts: Number(m.attempts) }));
}

// ---- Immediate mails: the events of a minute ----------------------------------------------------

/** (subscription, minute) groups whose minute ended before `before`, oldest first. */
export async function dueMinuteGroups(
  db: Queryable,
  before: Date,
  limit: number,
): Promise<{ subscription_id: string; minute: Date }[]> {
  const r = await db.query<{ subscription_id: string; minute: Date }>(
    `/* dueEmailMinuteGroups */
     select subscription_id, minute from email_pending_events
      where minute < date_trunc('minute', $1::timestamptz)
      group by subscription_id, minute
      order by minute, subscription_id
      limit $2`,
    [before.toISOString(), limit],
  );
  return r.rows;
}

const EVENT_NAMES = `
  left join products p on p.id = e.data->>'product_id' and p.account_id = e.account_id
  left join competitors c on c.id = e.data->>'competitor_id' and c.account_id = e.account_id`;

/**
 * Takes one group's events (locked, skipped when another worker holds them) and deletes them
 * from the queue, in the caller's transaction: the mail made of them is inserted in the same one.
 */
export async function takeMinuteGroup(db: Queryable, subscriptionId: string, minute: Date): Promise<MailEvent[]> {
  const locked = await db.query<{ event_seq: number }>(
    `/* lockEmailMinuteGroup */
     select event_seq from email_pending_events where subscription_id = $1 and minute = $2 for update skip locked`,
    [subscriptionId, minute.toISOString()],
  );
  if (locked.rows.length === 0) return [];
  const seqs = locked.rows.map((r) => Number(r.event_seq));
  const r = await db.query<MailEvent>(
    `/* emailMinuteGroupEvents */
     select e.id, e.type, e.created_at, e.data, p.name as product_name, c.name as competitor_name
       from events e ${EVENT_NAMES}
      where e.seq = any($1::bigint[])
      order by e.seq`,
    [seqs],
  );
  await db.query(
    '/* deleteEmailMinuteGroup */ delete from email_pending_events where subscription_id = $1 and event_seq = any($2::bigint[])',
    [subscriptionId, seqs],
  );
  return r.rows;
}

// ---- Digests ------------------------------------------------------------------------------------

export interface DueDigest extends SubscriptionStateRow {
  period_start: Date;
  period_end: Date;
  /** The period's bounds on the subscriber's clock, `YYYY-MM-DD HH24:MI`. */
  local_start: string;
  local_end: string;
}

/**
 * Confirmed, enabled digest subscriptions whose latest period ended at or before `now` and has
 * not been mailed: a daily period ends at `digest_hour` in `time_zone`, a weekly one at that
 * hour on Monday. Computed by PostgreSQL's time zone rules (daylight saving included). A period
 * that ended before the subscription was confirmed is skipped.
 */
export async function dueDigests(db: Queryable, now: Date, limit: number): Promise<DueDigest[]> {
  const r = await db.query<DueDigest>(
    `/* dueEmailDigests */
     select s.${STATE_COLUMNS.split(', ').join(', s.')},
            b.period_start, b.period_end,
            to_char(b.local_start, 'YYYY-MM-DD HH24:MI') as local_start, to_char(b.local_end, 'YYYY-MM-DD HH24:MI') as local_end
       from email_subscriptions s
      cross join lateral (
        select date_trunc(case when s.digest = 'weekly' then 'week' else 'day' end, $1::timestamptz at time zone s.time_zone)
               + s.digest_hour * interval '1 hour' as boundary,
               case when s.digest = 'weekly' then interval '7 days' else interval '1 day' end as step
      ) k
      cross join lateral (
        select case when (k.boundary at time zone s.time_zone) <= $1::timestamptz then k.boundary else k.boundary - k.step end as local_end
      ) e
      cross join lateral (
        select e.local_end - k.step as local_start, e.local_end,
               (e.local_end - k.step) at time zone s.time_zone as period_start,
               e.local_end at time zone s.time_zone as period_end
      ) b
      where s.digest <> 'none' and s.enabled and s.confirmed_at is not null
        and s.confirmed_at < b.period_end
        and (s.digest_through is null or s.digest_through < b.period_end)
      order by b.period_end, s.id
      limit $2`,
    [now.toISOString(), limit],
  );
  return r.rows;
}

/** Marks a period mailed; false when another worker did it first. */
export async function markDigestThrough(db: Queryable, id: string, periodEnd: Date): Promise<boolean> {
  const r = await db.query(
    `/* markEmailDigestThrough */
     update email_subscriptions set digest_through = $2
      where id = $1 and (digest_through is null or digest_through < $2)`,
    [id, periodEnd.toISOString()],
  );
  return r.rowCount > 0;
}

export const DIGEST_KINDS = {
  alerts: ['alert.triggered'],
  priceChanges: ['price.changed'],
  failures: ['listing.check_failed'],
} as const;

/** Up to `limit` events of `types` in [start, end), oldest first, and how many there were in all. */
export async function digestEvents(
  db: Queryable,
  accountId: string,
  types: readonly string[],
  start: Date,
  end: Date,
  limit: number,
): Promise<{ events: MailEvent[]; total: number }> {
  const count = await db.query<{ n: number }>(
    `/* countEmailDigestEvents */
     select count(*)::int as n from events
      where account_id = $1 and type = any($2::text[]) and created_at >= $3 and created_at < $4`,
    [accountId, types, start.toISOString(), end.toISOString()],
  );
  const r = await db.query<MailEvent>(
    `/* emailDigestEvents */
     select e.id, e.type, e.created_at, e.data, p.name as product_name, c.name as competitor_name
       from events e ${EVENT_NAMES}
      where e.account_id = $1 and e.type = any($2::text[]) and e.created_at >= $3 and e.created_at < $4
      order by e.created_at, e.id
      limit $5`,
    [accountId, types, start.toISOString(), end.toISOString(), limit],
  );
  return { events: r.rows, total: Number(count.rows[0]!.n) };
}
