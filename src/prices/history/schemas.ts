import { type Static, Type } from 'typebox';
import { Currency, Money, ResourceId, Timestamp } from '../../http/fields.js';
import { MAX_MONEY } from '../../money/decimal.js';
import { CursorQuery, PaginationSchema } from '../../pagination/schemas.js';
import { ProductCatalogueQuerySchema } from '../../products/schemas.js';
import { DAY_MS } from '../../time.js';

export const INTERVALS = ['raw', 'hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];
export type BucketUnit = Exclude<Interval, 'raw'>;

/**
 * The longest `to - from` per interval (docs/prices/HISTORY.md): about a thousand buckets per
 * series at most, so one request cannot ask for millions. Raw mode is paginated, and its span
 * bounds the rows a page has to sort.
 */
export const MAX_SPAN_DAYS: Record<Interval, number> = { raw: 366, hour: 31, day: 1100, week: 3660, month: 36_600 };
export const MAX_SPAN_MS = Object.fromEntries(INTERVALS.map((i) => [i, MAX_SPAN_DAYS[i] * DAY_MS])) as Record<
  Interval,
  number
>;
export const DEFAULT_SPAN_MS = 30 * DAY_MS;

/** Raw mode's page size: larger than other lists', observations are small rows users chart. */
export const RAW_LIMIT_DEFAULT = 100;
export const RAW_LIMIT_MAX = 1000;
/** Competitors one request may name. */
export const MAX_COMPETITORS = 50;

export const COMPETITOR_FILTER_PATTERN = '^(own|comp_[0-9A-Za-z]+)$';

export const HistoryQuerySchema = Type.Object(
  {
    from: Type.Optional(Timestamp('Start of the range (RFC 3339), inclusive; default: 30 days before `to`')),
    to: Type.Optional(Timestamp('End of the range (RFC 3339), exclusive; default: now')),
    competitor_id: Type.Optional(
      Type.Array(Type.String({ maxLength: 64, pattern: COMPETITOR_FILTER_PATTERN }), {
        maxItems: MAX_COMPETITORS,
        description:
          'Only these series: competitor ids, and `own` for our own shop. Repeat the parameter or separate ids with ' +
          'commas. An id that is not a competitor of this account matches nothing. Default: every series',
      }),
    ),
    interval: Type.Optional(
      Type.String({
        enum: [...INTERVALS],
        default: 'day',
        description: '`raw`: the observations, paginated; otherwise calendar buckets of this size in `tz`',
      }),
    ),
    tz: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$',
        default: 'UTC',
        description:
          'IANA time zone name (e.g. `Europe/Berlin`) whose calendar the hour, day, week and month buckets follow',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: RAW_LIMIT_MAX,
        description: `interval=raw only: page size, 1 to ${RAW_LIMIT_MAX}, default ${RAW_LIMIT_DEFAULT}`,
      }),
    ),
    cursor: Type.Optional({ ...CursorQuery, description: 'interval=raw only: `next_cursor` of the previous page' }),
  },
  { additionalProperties: false },
);

/** The CSV export streams every row: no pages. */
export const HistoryCsvQuerySchema = Type.Object(
  {
    from: HistoryQuerySchema.properties.from,
    to: HistoryQuerySchema.properties.to,
    competitor_id: HistoryQuerySchema.properties.competitor_id,
    interval: HistoryQuerySchema.properties.interval,
    tz: HistoryQuerySchema.properties.tz,
  },
  { additionalProperties: false },
);
export type HistoryCsvQuery = Static<typeof HistoryCsvQuerySchema>;

/**
 * GET /prices.csv: the raw observations of every product the filters of GET /products pick, in
 * one streamed file. The range as for raw history (default the last 30 days, at most 366).
 */
export const AccountPricesCsvQuerySchema = Type.Object(
  {
    from: HistoryQuerySchema.properties.from,
    to: HistoryQuerySchema.properties.to,
    competitor_id: HistoryQuerySchema.properties.competitor_id,
    ...ProductCatalogueQuerySchema.properties,
  },
  { additionalProperties: false },
);

export const AccountPricesCsvSchema = {
  type: 'string',
  pattern: '^product_id,sku,observed_at,',
  // Every observation of the account's products in up to 366 days, streamed: bounded by them, not by a byte count.
  maxLength: Number.MAX_SAFE_INTEGER,
  description:
    'RFC 4180 CSV, UTF-8, CRLF line ends, a header row first: product_id, sku, observed_at, competitor_id, ' +
    'competitor_name, listing_id, price, currency, in_stock, source, samples, price_sum, id. One row per observation, ' +
    "product after product (in `sort` order), each product's oldest first. Text cells starting with = + - @ get a leading '",
} as const;

export const ProductIdParams = Type.Object({ id: ResourceId('prod') });

/** A money value or null (empty bucket); a type list rather than a union, for the serializer's sake (src/http/fields.ts). */
const NullableMoney = (description: string) =>
  Type.Unsafe<number | null>({
    type: ['number', 'null'],
    format: 'money',
    minimum: 0,
    maximum: MAX_MONEY,
    description,
  });

const CompetitorOrOwn = Type.Unsafe<string | null>({
  ...ResourceId('comp'),
  type: ['string', 'null'],
  description: 'The competitor whose prices these are; null: our own shop',
});

export const PriceBucketSchema = Type.Object(
  {
    start: Timestamp('Start of the bucket, inclusive (RFC 3339, UTC)'),
    end: Timestamp(
      "End of the bucket, exclusive: the next bucket's start (a day in a time zone with DST can be 23 or 25 hours)",
    ),
    open: NullableMoney('Price of the first observation in the bucket; null when it has none'),
    close: NullableMoney('Price of the last observation in the bucket; null when it has none'),
    min: NullableMoney('Lowest price in the bucket'),
    max: NullableMoney('Highest price in the bucket'),
    average: NullableMoney('Mean of the observed prices, rounded half up to 4 decimal places'),
    count: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Observations in the bucket; 0: empty',
    }),
  },
  { title: 'PriceBucket', additionalProperties: false },
);

export const PriceSeriesSchema = Type.Object(
  {
    competitor_id: CompetitorOrOwn,
    currency: Currency,
    buckets: Type.Array(PriceBucketSchema, {
      maxItems: 40_000,
      description: 'Every bucket of the range, oldest first, empty ones included',
    }),
  },
  { title: 'PriceSeries', additionalProperties: false },
);

const rangeFields = {
  product_id: ResourceId('prod'),
  from: Timestamp("Start of the range answered (RFC 3339, UTC); for buckets, the first bucket's start"),
  to: Timestamp("End of the range answered (RFC 3339, UTC); for buckets, the last bucket's end"),
  tz: Type.String({
    maxLength: 64,
    pattern: '^[A-Za-z][A-Za-z0-9_+/-]*$',
    description: 'The time zone used, as its canonical IANA name',
  }),
};

export const PriceHistoryBucketsSchema = Type.Object(
  {
    object: Type.Literal('price_history'),
    ...rangeFields,
    interval: Type.String({ enum: ['hour', 'day', 'week', 'month'] }),
    series: Type.Array(PriceSeriesSchema, {
      maxItems: 10_000,
      description:
        'One entry per competitor and currency with observations in the range; our own shop first, then by competitor id',
    }),
  },
  { title: 'PriceHistoryBuckets', additionalProperties: false },
);
export type PriceHistoryBuckets = Static<typeof PriceHistoryBucketsSchema>;

export const HistoryObservationSchema = Type.Object(
  {
    id: ResourceId('obs'),
    competitor_id: CompetitorOrOwn,
    listing_id: Type.Unsafe<string | null>({
      ...ResourceId('lst'),
      type: ['string', 'null'],
      description: 'The page it was seen on, if any',
    }),
    price: Money('The price seen'),
    currency: Currency,
    in_stock: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: unknown' }),
    observed_at: Timestamp('When the price was seen (RFC 3339, UTC)'),
    source: Type.String({ enum: ['scrape', 'api'] }),
    samples: Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'Observations this row stands for: 1, or more for a row kept by the retention roll-up',
    }),
    price_sum: Type.Number({
      minimum: 0,
      description: 'Sum of the prices of the observations it stands for (`price` when `samples` is 1)',
    }),
  },
  { title: 'PriceHistoryObservation', additionalProperties: false },
);
export type HistoryObservation = Static<typeof HistoryObservationSchema>;

export const PriceHistoryObservationsSchema = Type.Object(
  {
    object: Type.Literal('price_history'),
    ...rangeFields,
    interval: Type.Literal('raw'),
    data: Type.Array(HistoryObservationSchema, {
      maxItems: RAW_LIMIT_MAX,
      description: 'Oldest first (observed_at, then id), across series',
    }),
    pagination: Type.Object(
      { ...PaginationSchema.properties, limit: Type.Integer({ format: 'int32', minimum: 1, maximum: RAW_LIMIT_MAX }) },
      { additionalProperties: false },
    ),
  },
  { title: 'PriceHistoryObservations', additionalProperties: false },
);

export const PriceHistorySchema = Type.Union([PriceHistoryBucketsSchema, PriceHistoryObservationsSchema], {
  description: 'interval=hour|day|week|month: buckets per series; interval=raw: a page of observations',
});

/** The CSV body: text that starts with its header row. */
export const PriceHistoryCsvSchema = {
  type: 'string',
  pattern: '^(competitor_id|observed_at),',
  // Spans bound it, not a byte count: a raw export streams every observation of up to 366 days.
  maxLength: Number.MAX_SAFE_INTEGER,
  description:
    'RFC 4180 CSV, UTF-8, CRLF line ends, a header row first. Buckets: competitor_id, competitor_name, currency, start, ' +
    'end, open, close, min, max, average, count. Raw: observed_at, competitor_id, competitor_name, listing_id, price, ' +
    "currency, in_stock, source, samples, price_sum, id. Text cells starting with = + - @ get a leading '",
} as const;
