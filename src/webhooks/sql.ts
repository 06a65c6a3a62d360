import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import type { EventType } from '../events/schemas.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, timestampKey } from '../pagination/sort.js';
import { type Delivery, RESPONSE_BODY_MAX, type Webhook, type WebhookFormat } from './schemas.js';

/**
 * Every query of the webhooks API, parameterised and scoped by account. The tables are shared
 * with the delivery worker (src/webhooks/delivery/, migrations/0004): this side writes endpoints
 * and queues attempts; the worker claims, sends and records them.
 */

export interface WebhookRow {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  format: WebhookFormat;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Only the answers to create and rotate-secret read the secret. */
export interface WebhookSecretRow extends WebhookRow {
  secret: string;
}

const COLUMNS = 'id, url, description, event_types, format, enabled, disabled_reason, created_at, updated_at';

export const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  object: 'webhook',
  url: r.url,
  description: r.description,
  event_types: r.event_types as EventType[],
  format: r.format,
  enabled: r.enabled,
  disabled_reason: r.disabled_reason,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export interface NewWebhook {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  format: WebhookFormat;
  enabled: boolean;
  secret: string;
}

export async function insertWebhook(db: Queryable, accountId: string, w: NewWebhook): Promise<WebhookSecretRow> {
  const r = await db.query<WebhookSecretRow>(
    `/* insertWebhook */
     insert into webhook_endpoints (account_id, id, url, description, event_types, format, enabled, secret)
     values ($1, $2, $3, $4, $5::text[], $6, $7, $8)
     returning ${COLUMNS}, secret`,
    [accountId, w.id, w.url, w.description, w.event_types, w.format, w.enabled, w.secret],
  );
  return r.rows[0]!;
}

export async function getWebhook(db: Queryable, accountId: string, id: string): Promise<WebhookRow | undefined> {
  const r = await db.query<WebhookRow>(
    `/* getWebhook */ select ${COLUMNS} from webhook_endpoints where id = $1 and account_id = $2`,
    [id, accountId],
  );
  return r.rows[0];
}

export const WEBHOOK_SORTS = {
  created_at: timestampKey('created_at', (r: WebhookRow) => r.created_at),
} satisfies Record<string, SortKey<WebhookRow>>;

export async function listWebhooks(
  db: Queryable,
  accountId: string,
  f: { enabled?: boolean | undefined },
  page: PageRequest<WebhookRow>,
): Promise<WebhookRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.enabled !== undefined) add((p) => `enabled = ${p}`, f.enabled);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<WebhookRow>(
    `/* listWebhooks */ select ${COLUMNS} from webhook_endpoints where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

export interface WebhookChanges {
  url?: string | undefined;
  description?: string | null | undefined;
  event_types?: string[] | undefined;
  format?: WebhookFormat | undefined;
  enabled?: boolean | undefined;
}

/**
 * Sets only the given fields; undefined when the endpoint is not in this account. Enabling a
 * disabled endpoint, or pointing it at another URL, forgets why it was disabled and that it was
 * failing (failing_since, probe_at), so its backlog goes out at once instead of waiting for a probe.
 */
export async function updateWebhook(
  db: Queryable,
  accountId: string,
  id: string,
  c: WebhookChanges,
): Promise<WebhookRow | undefined> {
  const params: unknown[] = [id, accountId];
  const sets: string[] = [];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`${column} = $${params.length}${cast}`);
  };
  if (c.url !== undefined) set('url', c.url);
  if (c.description !== undefined) set('description', c.description);
  if (c.event_types !== undefined) set('event_types', c.event_types, '::text[]');
  if (c.format !== undefined) set('format', c.format);
  if (c.enabled !== undefined) set('enabled', c.enabled);
  if (sets.length === 0) return getWebhook(db, accountId, id);
  const fresh: string[] = [];
  if (c.enabled === true) fresh.push('not enabled');
  if (c.url !== undefined) {
    params.push(c.url);
    fresh.push(`url <> $${params.length}`);
  }
  if (fresh.length > 0) {
    const when = fresh.join(' or ');
    sets.push(
      `disabled_reason = case when ${c.enabled === true ? 'not enabled' : 'false'} then null else disabled_reason end`,
      `failing_since = case when ${when} then null else failing_since end`,
      `probe_at = case when ${when} then null else probe_at end`,
    );
  }
  const r = await db.query<WebhookRow>(
    // Strictly later than before even within one millisecond, as for every resource.
    `/* updateWebhook */
     update webhook_endpoints set ${sets.join(', ')}, updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and account_id = $2
     returning ${COLUMNS}`,
    params,
  );
  return r.rows[0];
}

/** Its deliveries, pending ones included, go with it (foreign key). */
export async function deleteWebhook(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const r = await db.query('/* deleteWebhook */ delete from webhook_endpoints where id = $1 and account_id = $2', [
    id,
    accountId,
  ]);
  return r.rowCount > 0;
}

/**
 * A new secret; the current one becomes the previous, signing beside it for `overlapMs` (0: the
 * previous is dropped at once). A previous secret from an earlier rotation is replaced.
 */
export async function rotateWebhookSecret(
  db: Queryable,
  accountId: string,
  id: string,
  secret: string,
  overlapMs: number,
): Promise<WebhookSecretRow | undefined> {
  const r = await db.query<WebhookSecretRow>(
    `/* rotateWebhookSecret */
     update webhook_endpoints
        set previous_secret = case when $4::bigint > 0 then secret end,
            previous_secret_expires_at = case when $4::bigint > 0 then now() + $4::bigint * interval '1 millisecond' end,
            secret = $3,
            updated_at = greatest(now(), updated_at + interval '1 millisecond')
      where id = $1 and account_id = $2
     returning ${COLUMNS}, secret`,
    [id, accountId, secret, overlapMs],
  );
  return r.rows[0];
}

/** Wakes the delivery workers (LISTEN webhook_deliveries); sent when the transaction commits. */
export async function notifyDeliveryWorkers(db: Queryable): Promise<void> {
  await db.query(`/* notifyDeliveryWorkers */ select pg_notify('webhook_deliveries', '')`);
}

/** A first attempt of one event to one endpoint (the test event, which the fan-out skips). */
export async function insertDelivery(
  db: Queryable,
  accountId: string,
  endpointId: string,
  deliveryId: string,
  eventId: string,
): Promise<void> {
  await db.query(
    `/* insertDelivery */
     insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, next_attempt_at)
     select $1, e.account_id, $3, e.id, e.seq, e.created_at, 1, 'scheduled', now()
       from events e where e.id = $4 and e.account_id = $2`,
    [deliveryId, accountId, endpointId, eventId],
  );
}

/** The attempt after the event's last to this endpoint (1 when there was none). */
const NEXT_ATTEMPT = `coalesce((select max(d.attempt) from webhook_deliveries d where d.endpoint_id = $2 and d.event_id = e.id and d.event_created_at = e.created_at), 0) + 1`;

/** A manual attempt of one event of the account; false when the account has no such event. */
export async function queueRedelivery(
  db: Queryable,
  accountId: string,
  endpointId: string,
  eventId: string,
): Promise<boolean> {
  const r = await db.query(
    `/* queueRedelivery */
     insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, next_attempt_at)
     select ph_new_id('whdl'), e.account_id, $2, e.id, e.seq, e.created_at, ${NEXT_ATTEMPT}, 'manual', now()
       from events e where e.id = $3 and e.account_id = $1`,
    [accountId, endpointId, eventId],
  );
  return r.rowCount > 0;
}

/**
 * A manual attempt of every event created in [since, until) whose latest attempt to the endpoint
 * failed, in the order the events happened; returns how many.
 */
export async function queueFailedRedeliveries(
  db: Queryable,
  accountId: string,
  endpointId: string,
  since: string,
  until: string,
): Promise<number> {
  const r = await db.query(
    `/* queueFailedRedeliveries */
     insert into webhook_deliveries (id, account_id, endpoint_id, event_id, event_seq, event_created_at, attempt, trigger, next_attempt_at)
     select ph_new_id('whdl'), e.account_id, $2, e.id, e.seq, e.created_at, last.attempt + 1, 'manual', now()
       from events e
       cross join lateral (
         select d.attempt, d.status from webhook_deliveries d
          where d.endpoint_id = $2 and d.event_id = e.id and d.event_created_at = e.created_at
          order by d.attempt desc, d.created_at desc, d.id desc
          limit 1
       ) last
      where e.account_id = $1 and e.created_at >= $3::timestamptz and e.created_at < $4::timestamptz
        and last.status = 'failed'
      order by e.seq`,
    [accountId, endpointId, since, until],
  );
  return r.rowCount;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  status: Delivery['status'];
  response_status: number | null;
  duration_ms: number | null;
  response_body: string | null;
  error: string | null;
  trigger: Delivery['trigger'];
  created_at: Date;
  next_attempt_at: Date | null;
}

export const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  attempt: Number(r.attempt),
  status: r.status,
  response_status: r.response_status === null ? null : Number(r.response_status),
  duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
  response_body: r.response_body,
  error: r.error,
  trigger: r.trigger,
  created_at: iso(r.created_at),
  next_attempt_at: r.next_attempt_at ? iso(r.next_attempt_at) : null,
});

export const DELIVERY_SORTS = {
  created_at: timestampKey('created_at', (r: DeliveryRow) => r.created_at),
} satisfies Record<string, SortKey<DeliveryRow>>;

export interface DeliveryFilter {
  status?: string | undefined;
  event_id?: string | undefined;
}

export async function listDeliveries(
  db: Queryable,
  accountId: string,
  endpointId: string,
  f: DeliveryFilter,
  page: PageRequest<DeliveryRow>,
): Promise<DeliveryRow[]> {
  const { params, where, add } = accountWhere(accountId);
  add((p) => `endpoint_id = ${p}`, endpointId);
  if (f.status !== undefined) add((p) => `status = ${p}`, f.status);
  if (f.event_id !== undefined) add((p) => `event_id = ${p}`, f.event_id);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<DeliveryRow>(
    `/* listDeliveries */
     select id, event_id, (select e.type from events e where e.id = webhook_deliveries.event_id and e.created_at = webhook_deliveries.event_created_at) as event_type, attempt, status,
            response_status, duration_ms, left(response_body, ${RESPONSE_BODY_MAX}) as response_body, error, trigger,
            created_at, next_attempt_at
       from webhook_deliveries
      where ${where.join(' and ')}
      order by ${keyset.orderBy}
      limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}
