import { type Static, Type } from 'typebox';
import { Currency, HttpUrl, Nullable, RequiredText, ResourceId, Text, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';

const fields = {
  name: RequiredText(200, 'Competitor name'),
  website: HttpUrl("Address of the competitor's shop; its host gives `domain`"),
  notes: Text(10_000, 'Free-text notes'),
  proxy_url: HttpUrl(
    "HTTP proxy for this competitor's pages (sites that block data-centre addresses), e.g. " +
      '`http://user:password@proxy.example:8080`: no path, query or fragment. Responses show its user name and ' +
      'password as `****`; sending that masked URL back unchanged keeps the stored one',
  ),
};

export const CompetitorCreateSchema = Type.Object(
  {
    name: fields.name,
    website: fields.website,
    notes: Type.Optional(Nullable(fields.notes)),
    proxy_url: Type.Optional(Nullable(fields.proxy_url)),
  },
  { title: 'CompetitorCreate', additionalProperties: false },
);
export type CompetitorCreate = Static<typeof CompetitorCreateSchema>;

/** PUT and PATCH: only the fields sent change; `null` clears an optional field. */
export const CompetitorUpdateSchema = Type.Object(
  {
    name: Type.Optional(fields.name),
    website: Type.Optional(fields.website),
    notes: Type.Optional(Nullable(fields.notes)),
    proxy_url: Type.Optional(Nullable(fields.proxy_url)),
  },
  { title: 'CompetitorUpdate', additionalProperties: false },
);
export type CompetitorUpdate = Static<typeof CompetitorUpdateSchema>;

export const DOMAIN_MAX = 253;
/** A host name, or an IPv6 literal in its URL form (`[::1]`), the only place a colon may be. */
export const DOMAIN_PATTERN = '^([^\\s/?#@\\\\:%\\u0000\\[\\]]+|\\[[0-9a-fA-F:.]+\\])$';

const Domain = Type.String({
  minLength: 1,
  maxLength: DOMAIN_MAX,
  pattern: DOMAIN_PATTERN,
  description:
    'Host name of `website` in lower case, without a leading `www.` and without the port; an IPv6 address in brackets (`[::1]`)',
});

export const CompetitorSchema = Type.Object(
  {
    id: ResourceId('comp'),
    object: Type.Literal('competitor'),
    name: fields.name,
    website: fields.website,
    domain: Domain,
    notes: Nullable(fields.notes),
    proxy_url: Nullable(fields.proxy_url),
    listing_count: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Listings (product pages) at this competitor',
    }),
    created_at: Timestamp('When the competitor was created (RFC 3339, UTC)'),
    updated_at: Timestamp('When the competitor last changed (RFC 3339, UTC)'),
  },
  { title: 'Competitor', additionalProperties: false },
);
export type Competitor = Static<typeof CompetitorSchema>;

export const CompetitorListSchema = listOf(CompetitorSchema, 'CompetitorList');

export const COMPETITOR_SORT_FIELDS = ['created_at', 'updated_at', 'name', 'domain'] as const;

export const CompetitorListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(COMPETITOR_SORT_FIELDS, '-created_at')),
    domain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: DOMAIN_MAX,
        pattern: DOMAIN_PATTERN,
        description:
          'Exact domain, read as `domain` is derived: any case, a leading `www.` ignored, IDN in either form',
      }),
    ),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^[^\\u0000]*$',
        description: 'Case-insensitive text over name, website and notes',
      }),
    ),
    created_after: Type.Optional(Timestamp('Created at or after this instant')),
    created_before: Type.Optional(Timestamp('Created before this instant')),
  },
  { additionalProperties: false },
);

export const CompetitorIdParams = Type.Object({ id: ResourceId('comp') });

const Count = (description: string) =>
  Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description });
/** Averages and differences may be negative; bounded by the money range. */
const Amount = (description: string) =>
  Type.Number({ minimum: -100_000_000_000, maximum: 100_000_000_000, description });
const NullableNumber = (minimum: number, maximum: number, description: string) =>
  Type.Union([Type.Number({ minimum, maximum }), Type.Null()], { description });

const Comparison = {
  compared: Count("Listings whose latest price is in their product's currency, compared with its `base_price`"),
  cheaper: Count('Of those, listings priced below `base_price`'),
  same: Count('Of those, listings priced exactly at `base_price`'),
  more_expensive: Count('Of those, listings priced above `base_price`'),
  cheaper_share: NullableNumber(0, 1, '`cheaper / compared` (0 to 1, 4 decimals); null when nothing was compared'),
  average_difference_percent: NullableNumber(
    -100,
    1e18,
    'Mean of (price - base_price) / base_price x 100 over the compared listings whose base_price is above 0, 2 decimals; ' +
      'negative: the competitor is cheaper. null when there are none',
  ),
};

export const CompetitorAnalysisSchema = Type.Object(
  {
    object: Type.Literal('competitor_analysis'),
    competitor_id: ResourceId('comp'),
    listing_count: Count('Listings at this competitor'),
    product_count: Count('Our products this competitor lists (distinct products)'),
    not_compared: Type.Object(
      {
        no_price: Count('Listings with no price yet (never checked successfully)'),
        out_of_stock: Count('Listings whose latest check found the product out of stock: no offer to compare'),
        other_currency: Count(
          "Listings whose latest price is in another currency than their product's base_price: never converted",
        ),
      },
      { additionalProperties: false, description: 'Listings left out of the comparison, by reason' },
    ),
    overall: Type.Object(Comparison, {
      additionalProperties: false,
      description:
        'All compared listings; percentages are comparable across currencies, amounts are not, so amounts are only in `by_currency`',
    }),
    by_currency: Type.Array(
      Type.Object(
        {
          currency: Currency,
          ...Comparison,
          average_difference: Amount(
            'Mean of (price - base_price) over the compared listings in this currency, 4 decimals; negative: the competitor is cheaper',
          ),
        },
        { additionalProperties: false },
      ),
      { maxItems: 400, description: 'One entry per currency, in alphabetical order' },
    ),
  },
  {
    title: 'CompetitorAnalysis',
    additionalProperties: false,
    description: "Computed when asked from each listing's latest price (`last_price`, `last_currency`, `in_stock`)",
  },
);
export type CompetitorAnalysis = Static<typeof CompetitorAnalysisSchema>;
