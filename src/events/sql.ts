import type { Queryable } from '../db/types.js';
import { accountWhere } from '../db/where.js';
import { iso } from '../http/fields.js';
import { type PageRequest, pageSql } from '../pagination/page.js';
import { type SortKey, timestampKey } from '../pagination/sort.js';
import type { Event, EventType } from './schemas.js';

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

export async function getEvent(db: Queryable, accountId: string, id: string): Promise<EventRow | undefined> {
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
 * Deletes up to `limit` events created before `cutoff` (their deliveries go with them), oldest
 * first; returns how many. Short statements, so the embedded database is never held long.
 */
export async function deleteEventsBefore(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const r = await db.query(
    `/* deleteEventsBefore */
     delete from events where seq in (select seq from events where created_at < $1 order by created_at limit $2)`,
    [cutoff.toISOString(), limit],
  );
  return r.rowCount;
}
