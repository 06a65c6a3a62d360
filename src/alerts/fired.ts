import type { Queryable } from '../db/types.js';
import { recordEvents } from '../events/service.js';
import { newId } from '../ids.js';
import { type AlertEvent, toAlertEvent } from './alert-event.js';
import { insertAlertEvents, type NewAlertEvent } from './engine/sql.js';

/** What a rule fired, before it has an id. */
export type Firing = Omit<NewAlertEvent, 'id'>;

/**
 * Records firings in the caller's transaction `tx`: their alert_events rows and one
 * `alert.triggered` event each (data: the alert event as the API shows it), so an alert exists
 * exactly when the observation that fired it does. Two statements for any number of firings.
 */
export async function recordFirings(
  tx: Queryable,
  accountId: string,
  firings: readonly Firing[],
): Promise<AlertEvent[]> {
  if (firings.length === 0) return [];
  // Sorted, so that one transaction's events (which share created_at) list in the order they fired.
  const ids = firings.map(() => newId('alev')).sort();
  const rows = await insertAlertEvents(
    tx,
    accountId,
    firings.map((f, i) => ({ ...f, id: ids[i]! })),
  );
  const events = rows.map(toAlertEvent);
  await recordEvents(
    tx,
    accountId,
    events.map((data) => ({ type: 'alert.triggered' as const, data })),
  );
  return events;
}
