import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, timestampKey } from '../pagination/sort.js';
import type { Event, EventType } from './schemas.js';
import { idTime } from '../ids.js';
import { DAY_MS } from '../time.js';

/** Every query of the events outbox, parameterised and scoped by account. */

export interface EventRow {
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: Date;
}

const COLUMNS = 'id, type, data, created_at';

export const toEvent = (r: EventRow): Event => ({
  id: r.id,
  type: r.type,
  created_at: iso(r.created_at),
  data: r.data,
});

export interface NewEvent {
  id: string;
  type: EventType;
  data: object;
}

/**
 * Writes events in one statement, in the order given (their delivery order). The events_fan_out
 * trigger queues a delivery for every endpoint that wants each one (migrations/0004).
 */
export async function insertEvents(db: Queryable, accountId: string, events: readonly NewEvent[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  const r = await db.query<EventRow>(
    `/* insertEvents */
     insert into events (account_id, id, type, data)
     select $1, e.v->>'id', e.v->>'type', e.v->'data'
       from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
      order by e.n
     returning ${COLUMNS}`,
    [accountId, JSON.stringify(events)],
  );
  return r.rows;
}

/** How far from the time in its id an event's created_at is looked for first (clocks of two hosts). */
const ID_TIME_SLACK_MS = DAY_MS;

/**
 * One event by id. events is partitioned by day (migrations/0016) and has no index on id alone
 * across days: the time written in the id (src/ids.ts) bounds created_at, so the lookup probes
 * the two or three days around it; an id whose row lies elsewhere (written with another time)
 * is then looked for in every day.
 */
export async function getEvent(db: Queryable, accountId: string, id: string): Promise<EventRow | undefined> {
  const t = idTime(id);
  if (t !== undefined) {
    const r = await db.query<EventRow>(
      `/* getEventNear */ select ${COLUMNS} from events
        where id = $1 and account_id = $2 and created_at >= $3 and created_at < $4`,
      [id, accountId, new Date(t - ID_TIME_SLACK_MS).toISOString(), new Date(t + ID_TIME_SLACK_MS).toISOString()],
    );
    if (r.rows[0]) return r.rows[0];
  }
  const r = await db.query<EventRow>(`/* getEvent */ select ${COLUMNS} from events where id = $1 and account_id = $2`, [
    id,
    accountId,
  ]);
  return r.rows[0];
}

export const EVENT_SORTS = {
  created_at: timestampKey('created_at', (r: EventRow) => r.created_at),
} satisfies Record<string, SortKey<EventRow>>;

export interface EventFilter {
  types?: string[] | undefined;
  created_after?: string | undefined;
  created_before?: string | undefined;
}

export async function listEvents(
  db: Queryable,
  accountId: string,
  f: EventFilter,
  page: PageRequest<EventRow>,
): Promise<EventRow[]> {
  const { params, where, add } = accountWhere(accountId);
  if (f.types !== undefined) add((p) => `type = any(${p}::text[])`, f.types);
  if (f.created_after !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.created_after);
  if (f.created_before !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.created_before);
  const keyset = pageSql(page, params);
  if (keyset.after) where.push(keyset.after);
  const r = await db.query<EventRow>(
    `/* listEvents */ select ${COLUMNS} from events where ${where.join(' and ')} order by ${keyset.orderBy} limit ${keyset.limit}`,
    params,
  );
  return r.rows;
}

/**
 * Deletes up to `limit` events created before `cutoff` from the default partition (the days
 * without a partition of their own), with their deliveries and waiting mails in the same
 * statement (no foreign key cascades to a partitioned table, migrations/0016); returns how many
 * events went. Short statements, so the embedded database is never held long.
 */
export async function deleteDefaultEventsBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const r = await db.query<{ n: number }>(
    `/* deleteDefaultEventsBefore */
     with gone as (
       delete from events_default where seq in (select seq from events_default where created_at < $1 order by created_at limit $2)
       returning id, seq, created_at),
     deliveries as (
       delete from webhook_deliveries d using gone where d.event_id = gone.id and d.event_created_at = gone.created_at),
     mails as (
       delete from email_pending_events p using gone where p.event_seq = gone.seq)
     select count(*)::int as n from gone`,
    [cutoff.toISOString(), limit],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Deletes up to `limit` deliveries in the default partition whose event was created before `cutoff`. */
export async function deleteDefaultDeliveriesBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const r = await db.query(
    `/* deleteDefaultDeliveriesBefore */
     delete from webhook_deliveries_default
      where id in (select id from webhook_deliveries_default where event_created_at < $1 limit $2)
        and event_created_at < $1`,
    [cutoff.toISOString(), limit],
  );
  return r.rowCount;
}

/**
 * The mails waiting for events of a day about to be dropped (their minute is before the day's
 * end exactly when their event is): what the foreign key to events cascaded before migrations/0016.
 */
export async function deletePendingMailsBefore(db: Queryable, end: Date): Promise<void> {
  await db.query(`/* deletePendingMailsBefore */ delete from email_pending_events where minute < $1`, [
    end.toISOString(),
  ]);
}
