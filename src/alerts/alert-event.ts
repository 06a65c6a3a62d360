import { type Static, Type } from 'typebox';
import { Currency, Money, OrNull, ResourceId, Timestamp, iso } from '../http/fields.js';
import { CONDITION_TYPES } from './condition-types.js';

/**
 * An alert event as the API shows it (`"object": "alert_event"`): what a rule fired, with the
 * series' previous and current observation. The `data` of its `alert.triggered` event, an item
 * of `/alert-events` and of a preview's answer.
 */

const Observed = (which: string) =>
  OrNull(
    Type.Object(
      {
        price: Money(`The ${which} price`),
        currency: Currency,
        in_stock: OrNull(Type.Boolean(), { description: 'Whether the offer could be bought; null: unknown' }),
        observed_at: Timestamp(`When the ${which} price was seen (RFC 3339, UTC)`),
      },
      { additionalProperties: false },
    ),
    {
      description:
        which === 'previous'
          ? "The series' observation before the one that fired; null where there is none (a first observation, a failing listing)"
          : "The observation that fired (for `listing_failing`: the listing's last price, or null when it never had one)",
    },
  );

export type ObservedPrice = { price: number; currency: string; in_stock: boolean | null; observed_at: string };

const fields = {
  object: Type.Literal('alert_event'),
  alert_id: ResourceId('alrt'),
  condition_type: Type.String({
    enum: [...CONDITION_TYPES],
    description: "The type of the rule's condition when it fired",
  }),
  product_id: OrNull(ResourceId('prod'), {
    description: 'The product the firing is about; null for a test event of an account-wide rule',
  }),
  competitor_id: OrNull(ResourceId('comp'), {
    description: 'The competitor whose price fired the rule; null: our own price, or none',
  }),
  listing_id: OrNull(ResourceId('lst'), {
    description: 'The page the price was seen on (or the failing listing), if any',
  }),
  previous: Observed('previous'),
  current: Observed('current'),
  message: Type.String({ maxLength: 2000, description: 'One sentence for a person saying what happened' }),
  test: Type.Boolean({ description: 'true: sent by `POST /alerts/{id}/test`, not by a real observation' }),
  sequence: OrNull(Type.Integer({ format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), {
    description:
      "The `sequence` of the price series' change that fired the rule (as in `price.changed`); null when the firing came from no change (a first observation, an unchanged price, a failing listing, a test)",
  }),
  acknowledged_at: OrNull(Timestamp('When the event was acknowledged'), {
    description: 'When the event was acknowledged; null: open',
  }),
  created_at: Timestamp('When the rule fired (RFC 3339, UTC)'),
};

export const AlertEventSchema = Type.Object(
  { id: ResourceId('alev'), ...fields },
  { title: 'AlertEvent', additionalProperties: false },
);
export type AlertEvent = Static<typeof AlertEventSchema>;

/** A row of alert_events as read (`ALERT_EVENT_COLUMNS`). */
export interface AlertEventRow {
  id: string;
  alert_id: string;
  condition_type: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  previous: ObservedPrice | null;
  current: ObservedPrice | null;
  message: string;
  test: boolean;
  sequence: number | string | null;
  acknowledged_at: Date | null;
  created_at: Date;
}

export const ALERT_EVENT_COLUMNS =
  'id, alert_id, condition_type, product_id, competitor_id, listing_id, previous, current, message, test, sequence, acknowledged_at, created_at';

export function toAlertEvent(r: AlertEventRow): AlertEvent {
  return {
    id: r.id,
    object: 'alert_event',
    alert_id: r.alert_id,
    condition_type: r.condition_type,
    product_id: r.product_id,
    competitor_id: r.competitor_id,
    listing_id: r.listing_id,
    previous: r.previous,
    current: r.current,
    message: r.message,
    test: r.test,
    sequence: r.sequence === null ? null : Number(r.sequence),
    acknowledged_at: r.acknowledged_at === null ? null : iso(r.acknowledged_at),
    created_at: iso(r.created_at),
  };
}
