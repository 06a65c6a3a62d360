import type { Queryable } from '../../db/types.js';
import { ALERT_EVENT_COLUMNS, type AlertEventRow } from '../alert-event.js';

/** Statements of the alert engine (docs/alerts/firing.md): each a fixed cost for any batch. */

/** An alert_events row to insert (acknowledged_at null, created_at now()). */
export type NewAlertEvent = Omit<AlertEventRow, 'acknowledged_at' | 'created_at' | 'sequence'> & { sequence: number | null };

/** Inserts every firing in one statement, in the order given. */
export async function insertAlertEvents(db: Queryable, accountId: string, rows: readonly NewAlertEvent[]): Promise<AlertEventRow[]> {
  if (rows.length === 0) return [];
  const r = await db.query<AlertEventRow>(
    `/* insertAlertEvents */
     insert into alert_events (id, account_id, alert_id, condition_type, product_id, competitor_id, listing_id,
                               previous, current, message, test, sequence)
     select e.v->>'id', $1, e.v->>'alert_id', e.v->>'condition_type', e.v->>'product_id', e.v->>'competitor_id',
            e.v->>'listing_id', nullif(e.v->'previous', 'null'::jsonb), nullif(e.v->'current', 'null'::jsonb),
            e.v->>'message', (e.v->>'test')::boolean, (e.v->>'sequence')::bigint
       from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
      order by e.n
     returning ${ALERT_EVENT_COLUMNS}`,
    [accountId, JSON.stringify(rows)],
  );
  return r.rows;
}
