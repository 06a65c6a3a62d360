import { type Static, type TSchema, Type } from 'typebox';
import { AlertEventSchema } from '../alerts/schemas.js';
import { CheckResultSchema } from '../checks/schemas.js';
import { CompetitorSchema } from '../competitors/schemas.js';
import { ResourceId, Timestamp } from '../http/fields.js';
import { listOf } from '../pagination/schemas.js';
import { ListingSchema } from '../listings/schemas.js';
import { PriceChangeSchema } from '../prices/schemas.js';
import { ProductSchema } from '../products/schemas.js';
import { WebhookSchema, WebhookTestDataSchema } from '../webhooks/schemas.js';
import { type EventType, EventSchema } from './schemas.js';

/**
 * What each event type carries in `data` (docs/EVENTS.md), for the OpenAPI document: an event is
 * one of these variants, chosen by `type`, so a client generated from the document (the typed
 * client's `Event`) knows `data` once it has looked at `type`, without a cast.
 *
 * The document says this; the answers are serialised with the loose `EventSchema`
 * (./schemas.ts: `data` any object) that the routes set on their replies: events are stored as
 * written when they happened, and a serialiser that knew today's shapes would strip or refuse
 * an older event's fields. Tests check real events of every type against these variants
 * (test/events/documented.ts).
 */
const DATA: { [T in EventType]: { data: TSchema; is: string } } = {
  'product.created': { data: ProductSchema, is: 'the product created' },
  'product.updated': { data: ProductSchema, is: 'the product as changed' },
  'product.deleted': { data: ProductSchema, is: 'the product deleted' },
  'competitor.created': { data: CompetitorSchema, is: 'the competitor created' },
  'competitor.updated': { data: CompetitorSchema, is: 'the competitor as changed' },
  'competitor.deleted': { data: CompetitorSchema, is: 'the competitor deleted' },
  'listing.created': { data: ListingSchema, is: 'the listing created' },
  'listing.updated': { data: ListingSchema, is: 'the listing as changed' },
  'listing.deleted': { data: ListingSchema, is: 'the listing deleted' },
  'listing.check_failed': { data: CheckResultSchema, is: 'the failed check, as GET /listings/{id}/checks lists it' },
  'listing.price_held': {
    data: CheckResultSchema,
    is: 'the check that held its reading, as GET /listings/{id}/checks lists it',
  },
  'price.changed': {
    data: PriceChangeSchema,
    is: 'the price change (price or currency moved), as GET /price-changes lists it',
  },
  'stock.changed': { data: PriceChangeSchema, is: 'the price change (stock moved), as GET /price-changes lists it' },
  'alert.triggered': { data: AlertEventSchema, is: 'the alert event' },
  'webhook.test': { data: WebhookTestDataSchema, is: 'the test, naming the endpoint tested' },
  'endpoint.disabled': {
    data: WebhookSchema,
    is: 'the endpoint disabled, with its `disabled_reason`; its `url` without query (`?REDACTED`) or fragment',
  },
};

const variant = <T extends EventType>(type: T) =>
  Type.Object(
    {
      id: ResourceId('evt'),
      type: Type.Literal(type),
      created_at: Timestamp('When the change happened (RFC 3339, UTC)'),
      data: DATA[type].data,
    },
    {
      title: `Event_${type.replace('.', '_')}`,
      description: `\`data\`: ${DATA[type].is}`,
      additionalProperties: false,
    },
  );

const VARIANTS = (Object.keys(DATA) as EventType[]).map(variant);

/**
 * An event as the document describes it: one variant per type. (No description of its own: the
 * responses that answer one describe it, and the hoister keeps one text per title.)
 */
export const DocumentedEventSchema = Type.Unsafe<Static<typeof EventSchema>>({
  type: 'object',
  oneOf: VARIANTS,
  discriminator: { propertyName: 'type' },
  title: 'Event',
});

export const DocumentedEventListSchema = listOf(DocumentedEventSchema, 'EventList');

/** The loose shapes the event routes serialise with (see above): compiled once per route by Fastify. */
export const EVENT_SHAPE = EventSchema as unknown as Record<string, unknown>;
export const EVENT_LIST_SHAPE = listOf(EventSchema, 'EventListShape') as unknown as Record<string, unknown>;
