import { type Static, Type } from 'typebox';
import { Currency, Nullable, ResourceId, SignedAmount, Text, Timestamp } from '../http/fields.js';
import { checkRange } from '../pagination/filters.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';

/** GET /positions and /positions/summary (docs/POSITIONS.md; API.md, "Positions"). */

const int32 = (description: string, minimum = 0) =>
  Type.Integer({ format: 'int32', minimum, maximum: 2_147_483_647, description });

export const PositionSchema = Type.Object(
  {
    product_id: ResourceId('prod'),
    name: Text(200, "The product's name"),
    sku: Nullable(Text(100, "The product's SKU")),
    own_price: Type.Number({
      minimum: 0,
      description:
        "Our price in the product's currency: our own series' latest observation, else base_price (monitoring.position.own_price)",
    }),
    currency: Currency,
    rank: int32(
      '1 + the compared competitors strictly cheaper than us: 1 = cheapest, ties share a place (monitoring.position.rank)',
      1,
    ),
    of: int32('How many prices are compared, ours included: the compared competitors + 1', 2),
    price_index: SignedAmount(
      'own_price / average compared price x 100, 2 decimals (monitoring.position.price_index); null when that average is 0',
    ),
    cheapest: Type.Object(
      {
        competitor_id: ResourceId('comp'),
        name: Text(200, "The competitor's name"),
        price: Type.Number({ minimum: 0, description: "Its latest price converted into the product's currency" }),
      },
      {
        additionalProperties: false,
        description: 'The cheapest compared competitor (of those tied, the one with the smallest id)',
      },
    ),
    gap_amount: Type.Number({
      description: "own_price minus the cheapest competitor's price: positive when we are dearer",
    }),
    gap_percent: SignedAmount(
      "gap_amount as a percentage of the cheapest competitor's price, 2 decimals; null when that price is 0 and ours is not",
    ),
    undercut_by: int32('How many compared competitors are strictly below our price (rank - 1)'),
    changed_at: Timestamp('When any of these numbers last changed'),
  },
  {
    title: 'Position',
    additionalProperties: false,
    description: "Where a product's price stands among its competitors' latest prices",
  },
);
export type Position = Static<typeof PositionSchema>;

export const PositionListSchema = listOf(PositionSchema, 'PositionList');

export const POSITION_SORT_FIELDS = ['gap_percent', 'gap_amount', 'rank', 'price_index', 'name', 'changed_at'] as const;
export const POSITION_DEFAULT_SORT = '-gap_percent';

/** How a ranked product stands: the summary's counts and the list's `standing` filter (docs/POSITIONS.md). */
export const POSITION_STANDINGS = ['cheapest', 'in_between', 'dearest'] as const;
export type PositionStanding = (typeof POSITION_STANDINGS)[number];

/** The largest |gap_percent| a filter takes: far beyond any real gap, small enough to stay a number. */
export const GAP_PERCENT_LIMIT = 1_000_000_000;

const GapPercent = (description: string) =>
  Type.Number({
    minimum: -100,
    maximum: GAP_PERCENT_LIMIT,
    description: `${description}; -100 (we give it away) to ${GAP_PERCENT_LIMIT}`,
  });

/** What narrows positions (the list, and the summary's own part of it). */
const catalogueFilters = {
  brand: Type.Optional(Text(100, 'Exact brand of the product')),
  category: Type.Optional(Text(100, 'Exact category of the product')),
};

export const PositionListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(POSITION_SORT_FIELDS, POSITION_DEFAULT_SORT)),
    undercut: Type.Optional(
      Type.Boolean({
        description:
          'true: only products some competitor undercuts (rank > 1); false: only those none does (`true` or `false`)',
      }),
    ),
    standing: Type.Optional(
      Type.String({
        enum: [...POSITION_STANDINGS],
        description:
          'Only products standing this way, exactly as /positions/summary counts them: `cheapest` (rank 1), `in_between` (undercut, and some compared competitor dearer than us), `dearest` (undercut, and none dearer)',
      }),
    ),
    rank_min: Type.Optional(int32('Lowest rank, inclusive', 1)),
    rank_max: Type.Optional(int32('Highest rank, inclusive', 1)),
    competitor_id: Type.Optional({
      ...ResourceId('comp'),
      description: 'Only products this competitor undercuts (its compared price strictly below ours)',
    }),
    gap_percent_min: Type.Optional(
      GapPercent('Lowest gap_percent, inclusive (an infinite gap counts as above any bound)'),
    ),
    gap_percent_max: Type.Optional(GapPercent('Highest gap_percent, inclusive')),
    ...catalogueFilters,
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[^\\u0000]*$',
        description: 'Case-insensitive text over name, brand, sku and description',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PositionListQuery = Static<typeof PositionListQuerySchema>;

/** The checks across filters that a schema cannot say. */
export function checkPositionFilters(q: PositionListQuery): void {
  checkRange(q, 'rank_min', 'rank_max');
  checkRange(q, 'gap_percent_min', 'gap_percent_max');
}

/**
 * The price-index histogram's bucket bounds (docs/POSITIONS.md): each bucket holds indexes from
 * its `from` (inclusive) up to its `to` (exclusive); the first has no lower bound, the last no
 * upper one. 100 is the compared average; narrower buckets near it, where prices cluster.
 */
export const PRICE_INDEX_BOUNDS = [80, 90, 95, 100, 105, 110, 120] as const;

export const PositionSummaryQuerySchema = Type.Object(catalogueFilters, { additionalProperties: false });
export type PositionSummaryQuery = Static<typeof PositionSummaryQuerySchema>;

export const PositionSummarySchema = Type.Object(
  {
    object: Type.Literal('position_summary'),
    products: int32(
      "Products counted (all of the account's, or those of the brand and category asked): cheapest + in_between + dearest + alone",
    ),
    cheapest: int32('Ranked first: no compared competitor strictly cheaper (ties with the cheapest count here)'),
    in_between: int32('Some compared competitor cheaper and some dearer than us'),
    dearest: int32('Undercut, and no compared competitor dearer than us'),
    alone: int32(
      'No rank: no competitor price to compare (none, all out of stock or without a rate), or our own price has no rate',
    ),
    undercut: int32(
      'Some compared competitor strictly cheaper than us: in_between + dearest (GET /positions?undercut=true)',
    ),
    price_index_histogram: Type.Array(
      Type.Object(
        {
          from: SignedAmount('Lowest price index of the bucket, inclusive; null: no lower bound'),
          to: SignedAmount('Price index the bucket stops before; null: no upper bound'),
          count: int32('Ranked products whose price index falls in the bucket'),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: PRICE_INDEX_BOUNDS.length + 1,
        description: `Ranked products by price index, in ${PRICE_INDEX_BOUNDS.length + 1} buckets split at ${PRICE_INDEX_BOUNDS.join(', ')}; a null index (average 0) counts in the last`,
      },
    ),
  },
  {
    title: 'PositionSummary',
    additionalProperties: false,
    description: 'How the products stand, counted over their stored positions',
  },
);
export type PositionSummary = Static<typeof PositionSummarySchema>;
