import { type Static, Type } from 'typebox';
import {
  Currency,
  HttpUrl,
  Money,
  Nullable,
  OrNull,
  RequiredText,
  ResourceId,
  Text,
  Timestamp,
} from '../http/fields.js';
import { CHECK_OUTCOMES, type CheckOutcomeName, CheckResultSchema } from '../checks/schemas.js';
import { DEFAULT_HOLD_FACTOR } from '../checks/schemas.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';
import { batchBodySchema, batchResultSchema } from '../batches/schemas.js';

export const INTERVAL_MIN = 300;
export const INTERVAL_MAX = 2_592_000;
export const INTERVAL_DEFAULT = 21_600;
export const SELECTOR_MAX = 1000;
export const LISTING_STATUSES = ['pending', 'ok', 'failing', 'flagged'] as const;
export const HOLD_FACTOR_MAX = 1000;

const fields = {
  product_id: ResourceId('prod'),
  competitor_id: ResourceId('comp'),
  url: HttpUrl("Address of the page that shows the product's price"),
  selector: RequiredText(
    SELECTOR_MAX,
    "CSS selector of the element that holds the price on this page; tried before the page's structured data. " +
      'Must be a selector the extraction engine can use (CSS with jQuery-style extensions such as `:contains()`), not HTML',
  ),
  currency_override: {
    ...Currency,
    description: 'ISO 4217 code that replaces whatever currency the page states (any case on input)',
  },
  check_interval_seconds: Type.Integer({
    format: 'int32',
    minimum: INTERVAL_MIN,
    maximum: INTERVAL_MAX,
    description: `Seconds between checks: ${INTERVAL_MIN} (5 minutes) to ${INTERVAL_MAX} (30 days), default ${INTERVAL_DEFAULT} (6 hours)`,
  }),
  enabled: Type.Boolean({ description: 'false: never checked on schedule (default true)' }),
  respect_robots: Type.Boolean({
    description: "Honour the site's robots.txt (default true); false only for pages you may fetch anyway",
  }),
  render_js: Type.Boolean({
    description: 'Fetch with a real browser, for pages that only show the price with JavaScript (default false)',
  }),
  visible_fallback: Type.Boolean({
    description:
      'Read the price the page shows (the visible-price finder) when it has no structured price, and check a structured price against it (default true); false: structured data and `selector` only',
  }),
  hold_factor: OrNull(Type.Number({ minimum: 0, maximum: HOLD_FACTOR_MAX }), {
    description:
      `A check's price this many times the listing's last recorded price, or lower by as much, is held instead of recorded until a recheck ` +
      `reads it again or a person accepts it (docs/MONITORING.md "Held readings"). null (default): the account's default, ${DEFAULT_HOLD_FACTOR} ` +
      `(a fall of 75 % or a rise of 300 %); 0: never hold; otherwise more than 1, up to ${HOLD_FACTOR_MAX}. A price in another currency than the last is held whatever the factor, unless it is 0`,
  }),
};

export const ListingCreateSchema = Type.Object(
  {
    product_id: fields.product_id,
    competitor_id: Type.Optional(Nullable(fields.competitor_id)),
    url: Type.Optional(fields.url),
    selector: Type.Optional(Nullable(fields.selector)),
    currency_override: Type.Optional(Nullable(fields.currency_override)),
    check_interval_seconds: Type.Optional(fields.check_interval_seconds),
    enabled: Type.Optional(fields.enabled),
    respect_robots: Type.Optional(fields.respect_robots),
    render_js: Type.Optional(fields.render_js),
    visible_fallback: Type.Optional(fields.visible_fallback),
    hold_factor: Type.Optional(fields.hold_factor),
  },
  {
    title: 'ListingCreate',
    additionalProperties: false,
    description:
      "A product's page at a competitor (`competitor_id`), or on our own shop (`competitor_id` null or left out). " +
      "`url` is required for a competitor's page; for our own page it defaults to the product's `url`.",
  },
);
export type ListingCreate = Static<typeof ListingCreateSchema>;

/** SKUs as products have them (src/products/schemas.ts). */
export const SKU_MAX = 100;

/** An item of POST /listings/batch: a competitor's page of a product, named by id or SKU. */
export const ListingBatchItemSchema = Type.Object(
  {
    product_id: Type.Optional(fields.product_id),
    product_sku: Type.Optional(RequiredText(SKU_MAX, "The product's SKU, instead of `product_id`")),
    url: fields.url,
    competitor_id: Type.Optional(fields.competitor_id),
  },
  {
    title: 'ListingBatchItem',
    additionalProperties: false,
    description:
      "A competitor's page of a product: the product by `product_id` or by `product_sku` (exactly one of them), the page's `url`, " +
      "and the competitor, by `competitor_id` or, left out, the account's competitor of the URL's domain (created, named " +
      'after the domain, when there is none). The listing gets the defaults of POST /listings: checked every 6 hours, enabled.',
  },
);
export type ListingBatchItem = Static<typeof ListingBatchItemSchema>;

export const ListingBatchSchema = batchBodySchema(
  'listings',
  ListingBatchItemSchema,
  'ListingBatchCreate',
  "true: create all or none (422, or 409 when every failure is a URL already listed, with every item's problems when any fails)",
);

export const LISTING_BATCH_STATUSES = [201, 404, 409, 422];

/** PUT and PATCH: only the fields sent change. product_id and competitor_id are fixed at creation. */
export const ListingUpdateSchema = Type.Object(
  {
    url: Type.Optional(fields.url),
    selector: Type.Optional(Nullable(fields.selector)),
    currency_override: Type.Optional(Nullable(fields.currency_override)),
    check_interval_seconds: Type.Optional(fields.check_interval_seconds),
    enabled: Type.Optional(fields.enabled),
    respect_robots: Type.Optional(fields.respect_robots),
    render_js: Type.Optional(fields.render_js),
    visible_fallback: Type.Optional(fields.visible_fallback),
    hold_factor: Type.Optional(fields.hold_factor),
  },
  { title: 'ListingUpdate', additionalProperties: false },
);
export type ListingUpdate = Static<typeof ListingUpdateSchema>;

const Status = Type.String({
  enum: [...LISTING_STATUSES],
  description:
    '`pending`: never checked; `ok`: the last check found a price; `failing`: the last check failed; ' +
    '`flagged`: checks failed repeatedly and need attention (see `last_error`)',
});

export const WarningSchema = Type.Object(
  {
    code: Type.String({ enum: ['domain_mismatch'], description: 'A stable machine-readable code' }),
    message: Text(1000, 'What looks wrong, for a person'),
  },
  { additionalProperties: false },
);

/** A listing's pending held reading: what the dashboard shows with Accept and Reject. */
export const HeldReadingSchema = Type.Object(
  {
    check_id: ResourceId('chk'),
    price: Money('The price read and held'),
    currency: { ...Currency, description: 'Currency of `price`' },
    in_stock: Type.Union([Type.Boolean(), Type.Null()], { description: 'Stock state read with it; null: unknown' }),
    reason: Text(2000, 'Why it cannot be right, for a person'),
    checked_at: Timestamp('When the page was read: the time the price is recorded with if accepted'),
  },
  { title: 'ListingHeldReading', additionalProperties: false },
);

export const ListingSchema = Type.Object(
  {
    id: ResourceId('lst'),
    object: Type.Literal('listing'),
    product_id: fields.product_id,
    competitor_id: Type.Union([fields.competitor_id, Type.Null()], { description: "null: the page is our own shop's" }),
    url: fields.url,
    selector: Nullable(fields.selector),
    currency_override: Nullable(fields.currency_override),
    check_interval_seconds: fields.check_interval_seconds,
    enabled: fields.enabled,
    respect_robots: fields.respect_robots,
    render_js: fields.render_js,
    visible_fallback: fields.visible_fallback,
    hold_factor: fields.hold_factor,
    status: Status,
    last_checked_at: Nullable(Timestamp('When the last check finished, successful or not')),
    last_success_at: Nullable(Timestamp('When a check last found a price')),
    last_price: Type.Union([Money('The price the last successful check found'), Type.Null()]),
    last_currency: Nullable({ ...Currency, description: 'Currency of `last_price`' }),
    in_stock: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'Stock state the last successful check found; null: unknown',
    }),
    last_error: Nullable(Text(2000, 'Why the last check failed; null after a successful one')),
    consecutive_failures: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'Checks failed in a row',
    }),
    next_check_at: Nullable(
      Timestamp(
        'When the next scheduled check is due; null while the listing is disabled. A past time means "as soon as a worker is free"',
      ),
    ),
    held: Type.Union([HeldReadingSchema, Type.Null()], {
      description:
        'The price a check read and held, waiting for its recheck or for a person to accept or reject it; null: none',
    }),
    warnings: Type.Array(WarningSchema, {
      maxItems: 10,
      description: "Things that look wrong but were accepted, e.g. a URL outside the competitor's domain",
    }),
    created_at: Timestamp('When the listing was created (RFC 3339, UTC)'),
    updated_at: Timestamp("When the listing's settings last changed (RFC 3339, UTC); checks do not change it"),
  },
  { title: 'Listing', additionalProperties: false },
);
export type Listing = Static<typeof ListingSchema>;

export const ListingListSchema = listOf(ListingSchema, 'ListingList');

export const ListingBatchResultSchema = batchResultSchema(
  'listing',
  ListingSchema,
  {
    values: LISTING_BATCH_STATUSES,
    description:
      '201 created; 404 a product or competitor that is not in the account; 409 a URL the product already has a listing for, ' +
      'or the same product and URL earlier in the batch; 422 invalid fields or a URL that may not be fetched',
  },
  'ListingBatchResult',
);

export const LISTING_SORT_FIELDS = ['created_at', 'updated_at', 'next_check_at'] as const;

const BooleanQuery = (description: string) => Type.Boolean({ description: `${description} (\`true\` or \`false\`)` });

const listQuery = {
  limit: Type.Optional(LimitQuery),
  cursor: Type.Optional(CursorQuery),
  sort: Type.Optional(SortQuery(LISTING_SORT_FIELDS, '-created_at')),
  status: Type.Optional(Status),
  enabled: Type.Optional(BooleanQuery('Only enabled or only disabled listings')),
  held: Type.Optional(BooleanQuery('Only listings with a held reading waiting (`true`), or only those without')),
  created_after: Type.Optional(Timestamp('Created at or after this instant')),
  created_before: Type.Optional(Timestamp('Created before this instant')),
};

export const ListingListQuerySchema = Type.Object(
  {
    ...listQuery,
    product_id: Type.Optional(fields.product_id),
    competitor_id: Type.Optional(fields.competitor_id),
    own: Type.Optional(BooleanQuery("true: only our own shop's pages; false: only competitors' pages")),
  },
  { additionalProperties: false },
);
export type ListingListQuery = Static<typeof ListingListQuerySchema>;

export const ProductListingsQuerySchema = Type.Object(
  {
    ...listQuery,
    competitor_id: Type.Optional(fields.competitor_id),
    own: Type.Optional(BooleanQuery("true: only our own shop's pages; false: only competitors' pages")),
  },
  { additionalProperties: false },
);

export const CompetitorListingsQuerySchema = Type.Object(
  { ...listQuery, product_id: Type.Optional(fields.product_id) },
  { additionalProperties: false },
);

export const ListingIdParams = Type.Object({ id: ResourceId('lst') });

/** The check log lists checks in the shape `POST /listings/{id}/check` returns (src/checks/schemas.ts). */
export const ListingCheckListSchema = listOf(CheckResultSchema, 'ListingCheckList');

export const ListingCheckQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    ok: Type.Optional(
      BooleanQuery('Only checks that recorded a price (`true`), or only the others: failed and held (`false`)'),
    ),
    outcome: Type.Optional(
      Type.Unsafe<CheckOutcomeName>({
        type: 'string',
        enum: [...CHECK_OUTCOMES],
        description: 'Only checks with this `outcome`',
      }),
    ),
  },
  { additionalProperties: false },
);
