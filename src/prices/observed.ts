import { evaluateObservations } from '../alerts/service.js';
import type { Queryable } from '../db/types.js';
import type { EventType } from '../events/schemas.js';
import { recordEvents } from '../events/service.js';
import { changesOfObservations, toPriceChange } from './changes/sql.js';

/**
 * What follows new price observations, in the transaction that records them, whatever recorded
 * them (a check, POST /prices): the `price.changed` / `stock.changed` events of the changes they
 * made (the price_observations trigger found those), then the account's alert rules over them
 * (src/alerts/engine/live.ts). A statement's worth of observations costs a fixed number of
 * queries, not one per observation.
 */
export async function afterObservations(
  tx: Queryable,
  accountId: string,
  observationIds: readonly number[],
  opts: { alertInlineMax?: number } = {},
): Promise<void> {
  if (observationIds.length === 0) return;
  const changes = await changesOfObservations(tx, accountId, observationIds);
  const events: { type: EventType; data: object }[] = [];
  for (const row of changes) {
    const data = toPriceChange(row);
    // A change of price (or currency) and of stock at once is told by both events, with one sequence.
    if (row.new_price !== row.old_price || row.new_currency !== row.old_currency)
      events.push({ type: 'price.changed', data });
    if (row.new_in_stock !== row.old_in_stock) events.push({ type: 'stock.changed', data });
  }
  await recordEvents(tx, accountId, events);
  await evaluateObservations(tx, accountId, observationIds, opts.alertInlineMax);
}
