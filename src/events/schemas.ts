import { type Static, Type } from 'typebox';
import { ResourceId, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, SortQuery } from '../pagination/schemas.js';

/** Every event type (docs/EVENTS.md); webhook endpoints subscribe to these names. */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.deleted',
  'competitor.created',
  'competitor.updated',
  'competitor.deleted',
  'listing.created',
  'listing.updated',
  'listing.deleted',
  'listing.check_failed',
  'listing.price_held',
  'price.changed',
  'stock.changed',
  'alert.triggered',
  'webhook.test',
  'endpoint.disabled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EventTypeSchema = Type.String({ enum: [...EVENT_TYPES], description: 'The kind of event' });

export const EventSchema = Type.Object(
  {
    id: ResourceId('evt'),
    type: EventTypeSchema,
    created_at: Timestamp('When the change happened (RFC 3339, UTC)'),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'The resource as the API returns it (for `alert.triggered`: the alert event). Events about one price series ' +
          'carry `sequence`, increasing by one per change of that series',
      },
    ),
  },
  { additionalProperties: false },
);
/** An event as stored and served: `data` any object. The document tells each type's `data` (./payloads.ts). */
export type Event = Static<typeof EventSchema>;

export const EventListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 400,
        pattern: '^[a-z_.]+(,[a-z_.]+)*$',
        description: 'Only events of this type; several separated by commas (`price.changed,stock.changed`)',
      }),
    ),
    created_after: Type.Optional(Timestamp('Created at or after this instant')),
    created_before: Type.Optional(Timestamp('Created before this instant')),
  },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ id: ResourceId('evt') });
