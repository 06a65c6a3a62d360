import { type Static, Type } from 'typebox';
import {
  ConvertedMoney,
  Currency,
  Money,
  Nullable,
  ResourceId,
  SignedAmount,
  Text,
  Timestamp,
} from '../../http/fields.js';
import { RANGES } from './sql.js';

/** GET /products/{id}/trends (docs/prices/TRENDS.md defines every field). */

const PriceAt = Type.Union(
  [
    Type.Object(
      {
        price: Money('The price'),
        at: Timestamp(
          'When it was observed (the latest such observation); may be before the range when it still held at its start',
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: "null: no price in stock (or of unknown stock) in the series' current currency in the range" },
);

const Change = Type.Object(
  {
    from: SignedAmount(
      'The price at now minus the period (the latest observation at or before it); null: none so early',
    ),
    from_currency: Nullable(
      Type.String({ minLength: 3, maxLength: 3, pattern: '^[A-Z]{3}$', description: 'Its currency' }),
    ),
    amount: SignedAmount(
      "price now - from, in the series' currency; null when there is no `from` or its currency differs",
    ),
    percent: SignedAmount('amount / from x 100, 2 decimals; null when `amount` is null or `from` is 0'),
  },
  { additionalProperties: false },
);

export const ChangesSchema = Type.Union(
  [
    Type.Object(
      { '24h': Change, '7d': Change, '30d': Change },
      { title: 'PriceChangesOverPeriods', additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      "The change of the series' price over each period; null without observations (our base_price has no history)",
  },
);

const Range = Type.Object(
  {
    average: SignedAmount(
      'Time-weighted average price over the time the series had a price in stock or of unknown stock in the range',
    ),
    lowest: PriceAt,
    highest: PriceAt,
    current_is_lowest: Type.Union([Type.Boolean(), Type.Null()], {
      description:
        'The current price is not above `lowest` (and is not out of stock); null when the series is out of stock now',
    }),
    observations: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Observations made in the range (rolled-up rows count their samples)',
    }),
    out_of_stock_share: SignedAmount(
      'Share of the time with known stock in the range that the offer was out of stock, 0-1, 4 decimals; null: stock never known',
    ),
  },
  { additionalProperties: false },
);

export const SeriesStatsSchema = Type.Union(
  [
    Type.Object(
      {
        currency: Currency,
        lowest_ever: PriceAt,
        highest_ever: PriceAt,
        ranges: Type.Object(Object.fromEntries(RANGES.map((d) => [`${d}d`, Range])), { additionalProperties: false }),
      },
      {
        title: 'SeriesStats',
        additionalProperties: false,
        description: 'Keepa-style statistics of the series, in its current currency',
      },
    ),
    Type.Null(),
  ],
  { description: 'null: no observations (our base_price)' },
);

export const OwnPositionSchema = Type.Object(
  {
    source: Type.String({
      enum: ['observation', 'base_price'],
      description: "Where `price` comes from: our own series' latest observation, else the product's base_price",
    }),
    price: Money('Our current price'),
    currency: Currency,
    price_in_product_currency: ConvertedMoney(
      "`price` in the product's currency; null when no exchange rate allows it",
    ),
    in_stock: Type.Union([Type.Boolean(), Type.Null()]),
    observed_at: Nullable(Timestamp('When it was observed; null for base_price')),
    listing_id: Nullable(ResourceId('lst')),
    price_since: Nullable(
      Timestamp('Since when the series has had this price (start of the current run of equal prices)'),
    ),
    changes: ChangesSchema,
    stats: SeriesStatsSchema,
  },
  { title: 'OwnPrice', additionalProperties: false },
);

export const CompetitorPositionSchema = Type.Object(
  {
    competitor_id: ResourceId('comp'),
    competitor_name: Text(200, "The competitor's name"),
    price: Money("The competitor's latest price"),
    currency: Currency,
    in_stock: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: unknown' }),
    observed_at: Timestamp('When it was observed'),
    listing_id: Nullable(ResourceId('lst')),
    price_in_product_currency: ConvertedMoney(
      "`price` in the product's currency; null when no exchange rate allows it",
    ),
    compared: Type.String({
      enum: ['yes', 'out_of_stock', 'no_rate'],
      description: 'Whether this price is in the comparison, or why it is left out',
    }),
    price_since: Timestamp('Since when the series has had this price (start of the current run of equal prices)'),
    changes: ChangesSchema,
    stats: SeriesStatsSchema,
  },
  { title: 'CompetitorPrice', additionalProperties: false },
);

export const ComparisonSchema = Type.Object(
  {
    compared: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Competitors whose latest price is compared',
    }),
    left_out: Type.Object(
      {
        out_of_stock: Type.Integer({
          format: 'int32',
          minimum: 0,
          maximum: 2_147_483_647,
          description: 'Latest offer out of stock',
        }),
        no_rate: Type.Integer({
          format: 'int32',
          minimum: 0,
          maximum: 2_147_483_647,
          description: 'Priced in a currency no exchange rate converts',
        }),
      },
      { additionalProperties: false },
    ),
    lowest: ConvertedMoney("Lowest compared price, in the product's currency"),
    average: ConvertedMoney('Mean of the compared prices (4 decimals)'),
    highest: ConvertedMoney('Highest compared price'),
    rank: Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647 }), Type.Null()], {
      description:
        'Our place among us and the compared competitors, cheapest first: 1 + the competitors strictly cheaper than us (ties share a place); null when none is compared or our price has no rate',
    }),
    price_index: SignedAmount(
      'Our price / average x 100, 2 decimals; null when there is no average, it is 0, or our price has no rate',
    ),
    cheapest: Type.Union(
      [
        Type.Object(
          {
            competitor_id: ResourceId('comp'),
            competitor_name: Text(200, "The competitor's name"),
            price_in_product_currency: Money("Its price, in the product's currency"),
            tied: Type.Integer({
              format: 'int32',
              minimum: 0,
              maximum: 2_147_483_647,
              description: 'Other compared competitors at the same price (the lowest id is shown)',
            }),
            since: Timestamp(
              "Since when it has been the cheapest: the later of the start of its current price and the last time another compared competitor charged less (at today's rates)",
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The cheapest compared competitor; null when none is compared' },
    ),
    stock: Type.Object(
      {
        in_stock: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }),
        out_of_stock: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }),
        unknown: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }),
      },
      { additionalProperties: false, description: 'Competitors by the stock of their latest observation' },
    ),
  },
  { title: 'PriceComparison', additionalProperties: false },
);

export const TrendsSchema = Type.Object(
  {
    object: Type.Literal('product_trends'),
    product_id: ResourceId('prod'),
    currency: Currency,
    as_of: Timestamp('The instant every period and range ends at'),
    own: OwnPositionSchema,
    comparison: ComparisonSchema,
    competitors: Type.Array(CompetitorPositionSchema, {
      maxItems: 100_000,
      description: "Each competitor's latest price, by competitor id",
    }),
  },
  { title: 'ProductTrends', additionalProperties: false },
);
export type Trends = Static<typeof TrendsSchema>;
export type SeriesStats = Static<typeof SeriesStatsSchema>;
export type Changes = Static<typeof ChangesSchema>;

export const TrendsQuerySchema = Type.Object({}, { additionalProperties: false });
