import type { Database, Queryable } from '../db/types.js';
import { newId } from '../ids.js';
import type { EventType } from './schemas.js';
import { DAY_MS } from '../time.js';
import { dropEventsBefore, type PruneResult } from './partitions.js';
import { type EventRow, insertEvents } from './sql.js';

/**
 * The outbox (docs/EVENTS.md): every change that users may hear of records its events with the
 * transaction `tx` that makes the change, so an event exists exactly when its change does. The
 * same statement queues each event's webhook deliveries (migrations/0004, events_fan_out).
 */
export async function recordEvents(
  tx: Queryable,
  accountId: string,
  events: readonly { type: EventType; data: object }[],
): Promise<EventRow[]> {
  // Sorted, so that the ids of one transaction's events (which share created_at) list in the
  // order they happened.
  const ids = events.map(() => newId('evt')).sort();
  return insertEvents(
    tx,
    accountId,
    events.map((e, i) => ({ id: ids[i]!, type: e.type, data: e.data })),
  );
}

export async function recordEvent(tx: Queryable, accountId: string, type: EventType, data: object): Promise<EventRow> {
  const [row] = await recordEvents(tx, accountId, [{ type, data }]);
  return row!;
}

/**
 * Prunes events older than `retentionDays` with their deliveries (src/events/partitions.ts):
 * whole days dropped, never a long DELETE.
 */
export function pruneEvents(
  db: Database,
  retentionDays: number,
  now = new Date(),
  opts: { stop?: () => boolean } = {},
): Promise<PruneResult> {
  return dropEventsBefore(db, new Date(now.getTime() - retentionDays * DAY_MS), opts);
}

export { EVENT_PARTITIONS, type PruneResult } from './partitions.js';

/** The documented payload of each event type (a webhook's test shows one). */
export { DocumentedEventSchema, EVENT_SHAPE } from './payloads.js';
