import type { Queryable } from '../db/types.js';
import { newId } from '../ids.js';
import type { EventType } from './schemas.js';
import { DAY_MS } from '../time.js';
import { deleteEventsBefore, type EventRow, insertEvents } from './sql.js';

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

const PRUNE_BATCH = 1000;

/**
 * Deletes events older than `retentionDays`, a batch per statement until none is left; returns
 * how many went. Their deliveries go with them (foreign key).
 */
export async function pruneEvents(db: Queryable, retentionDays: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  let total = 0;
  for (;;) {
    const n = await deleteEventsBefore(db, cutoff, PRUNE_BATCH);
    total += n;
    if (n < PRUNE_BATCH) return total;
  }
}

/** The documented payload of each event type (a webhook's test shows one). */
export { DocumentedEventSchema, EVENT_SHAPE } from './payloads.js';
