import { type Static, Type } from 'typebox';
import { Currency, Money, Nullable, ResourceId, Timestamp } from '../../http/fields.js';
import { batchBodySchema, batchResultSchema } from '../../batches/schemas.js';

/** observed_at may be at most this far ahead of the server's clock (clients' clocks drift). */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;
/** No observation before this instant: older ones are typos (a year 0201), not price history. */
export const EARLIEST_OBSERVED_AT = '2000-01-01T00:00:00Z';

export const InStock = Type.Union([Type.Boolean(), Type.Null()], {
  description: 'Whether the offer could be bought; null or left out: unknown',
});

export const ObservationCreateSchema = Type.Object(
  {
    product_id: ResourceId('prod'),
    competitor_id: Type.Optional(
      Nullable({
        ...ResourceId('comp'),
        description:
          'The competitor whose price this is; null or left out: our own price (unless `listing_id` says otherwise)',
      }),
    ),
    listing_id: Type.Optional(
      Nullable({
        ...ResourceId('lst'),
        description:
          'The page the price was seen on; must be a listing of `product_id` (and of `competitor_id` when that is sent). ' +
          "When only `listing_id` is sent the competitor is the listing's",
      }),
    ),
    price: Money('The price seen'),
    currency: Currency,
    in_stock: Type.Optional(InStock),
    observed_at: Type.Optional(
      Timestamp(
        'When the price was seen, RFC 3339 with a time zone offset; default: when the request arrived. Not before ' +
          "2000-01-01 and at most 5 minutes ahead of the server's clock; kept to the millisecond",
      ),
    ),
  },
  { title: 'PriceObservationCreate', additionalProperties: false },
);
export type ObservationCreate = Static<typeof ObservationCreateSchema>;

export const PriceObservationSchema = Type.Object(
  {
    id: ResourceId('obs'),
    object: Type.Literal('price_observation'),
    product_id: ResourceId('prod'),
    competitor_id: Type.Union([ResourceId('comp'), Type.Null()], { description: 'null: our own price' }),
    listing_id: Type.Union([ResourceId('lst'), Type.Null()], { description: 'The page the price was seen on, if any' }),
    price: Money('The price seen'),
    currency: Currency,
    in_stock: InStock,
    observed_at: Timestamp('When the price was seen (RFC 3339, UTC, milliseconds)'),
    source: Type.String({
      enum: ['scrape', 'api'],
      description: '`scrape`: a check of a listing; `api`: sent through POST /prices',
    }),
    created_at: Timestamp('When the observation was recorded (RFC 3339, UTC)'),
  },
  { title: 'PriceObservation', additionalProperties: false },
);
export type PriceObservation = Static<typeof PriceObservationSchema>;

export const IngestBatchSchema = batchBodySchema(
  'observations',
  ObservationCreateSchema,
  'PriceObservationBatch',
  "true: record all or none (422 with every item's problems when any fails)",
);

export const IngestResultSchema = batchResultSchema(
  'observation',
  PriceObservationSchema,
  {
    values: [201, 404, 422],
    description: '201 recorded; 404 a product, competitor or listing that is not in the account; 422 invalid fields',
  },
  'PriceObservationBatchResult',
);
