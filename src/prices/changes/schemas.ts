import { type Static, Type } from 'typebox';
import { Currency, Money, ResourceId, Timestamp } from '../../http/fields.js';
import { MAX_MONEY } from '../../money/decimal.js';
import { CursorQuery, LimitQuery, listOf } from '../../pagination/schemas.js';
import { InStock } from '../ingest/schemas.js';

/** The `kind` filter of GET /price-changes; the summary counts each. */
export const CHANGE_KINDS = ['up', 'down', 'moved', 'back_in_stock', 'out_of_stock'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

const Side = (which: string) =>
  Type.Object(
    {
      price: Money(`The ${which} price`),
      currency: Currency,
      in_stock: InStock,
      observed_at: Timestamp(`When the ${which} price was seen (RFC 3339, UTC)`),
    },
    { additionalProperties: false, description: `The series' ${which} latest observation` },
  );

export const PriceChangeSchema = Type.Object(
  {
    id: ResourceId('pchg'),
    object: Type.Literal('price_change', {
      description: "A series' new latest observation that differs from the one before it in price, currency or stock",
    }),
    product_id: ResourceId('prod'),
    competitor_id: Type.Union([ResourceId('comp'), Type.Null()], { description: 'null: our own price' }),
    listing_id: Type.Union([ResourceId('lst'), Type.Null()], {
      description: 'The page the new price was seen on, if any',
    }),
    observation_id: ResourceId('obs'),
    old: Side('previous'),
    new: Side('new'),
    change: Type.Union(
      [
        Type.Object(
          {
            amount: Type.Number({
              minimum: -MAX_MONEY,
              maximum: MAX_MONEY,
              description:
                'new price - old price, exact to 4 decimal places; negative: the price fell; 0: only the stock changed',
            }),
            percent: Type.Union([Type.Number({ minimum: -100, maximum: 1e17 }), Type.Null()], {
              description:
                'amount as a percentage of the old price, rounded to 2 decimal places (half away from zero); null when the old price was 0',
            }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'How much the price moved; null when the currency changed (amounts in two currencies are never subtracted)',
      },
    ),
    source: Type.String({
      enum: ['scrape', 'api'],
      description: 'Where the new observation came from: a check (`scrape`) or POST /prices (`api`)',
    }),
    sequence: Type.Integer({
      format: 'int64',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        "The change's number in its series: 1 for the first change, one more for each after it (events carry it, so a gap shows)",
    }),
    created_at: Timestamp('When the change was recorded (RFC 3339, UTC)'),
  },
  { title: 'PriceChange', additionalProperties: false },
);
export type PriceChange = Static<typeof PriceChangeSchema>;

export const PriceChangeListSchema = listOf(PriceChangeSchema, 'PriceChangeList');

/** Whose price series a list or summary of changes covers (`series=`): our own or the competitors'. */
export const CHANGE_SERIES = ['own', 'competitors'] as const;
export type ChangeSeries = (typeof CHANGE_SERIES)[number];

export const PriceChangeQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    product_id: Type.Optional(ResourceId('prod')),
    competitor_id: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: '^(own|comp_[0-9A-Za-z]+)$',
        description: "A competitor's id, or `own` for our own prices",
      }),
    ),
    since: Type.Optional(Timestamp('Changes observed at or after this instant')),
    until: Type.Optional(Timestamp('Changes observed before this instant')),
    series: Type.Optional(
      Type.Unsafe<ChangeSeries>({
        type: 'string',
        enum: [...CHANGE_SERIES],
        description:
          "Whose prices: `own` our own (as `competitor_id=own`), `competitors` every competitor's; absent: both",
      }),
    ),
    kind: Type.Optional(
      Type.Unsafe<ChangeKind>({
        type: 'string',
        enum: [...CHANGE_KINDS],
        description:
          'Only changes of one kind: `up` / `down` the price rose / fell (same currency), `moved` either, ' +
          '`back_in_stock` the stock became true, `out_of_stock` it became false (from anything else, unknown included). ' +
          'GET /price-changes/summary counts each kind',
      }),
    ),
  },
  { additionalProperties: false },
);

const SummaryCount = (description: string) =>
  Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

export const PriceChangeSummarySchema = Type.Object(
  {
    object: Type.Literal('price_change_summary'),
    since: Timestamp('The start of the period (inclusive), as asked'),
    until: Timestamp('Its end: when the summary was computed'),
    changes: SummaryCount('Every change observed in the period'),
    up: SummaryCount('Changes whose price rose (same currency): the length of `GET /price-changes?since=...&kind=up`'),
    down: SummaryCount('Changes whose price fell (`kind=down`)'),
    back_in_stock: SummaryCount('Changes to in stock from out of stock or unknown (`kind=back_in_stock`)'),
    out_of_stock: SummaryCount('Changes to out of stock from in stock or unknown (`kind=out_of_stock`)'),
    average_percent: Type.Union([Type.Number({ minimum: -100, maximum: 1e17 }), Type.Null()], {
      description:
        'Mean `change.percent` of the rises and falls (`kind=moved`), 2 decimal places; null when there are none',
    }),
    series_observed: SummaryCount(
      'Price series (a product at one competitor, or our own price) with an observation in the period',
    ),
    series_unchanged: SummaryCount(
      'Of those, the series whose price (and currency) did not change in the period; stock may have',
    ),
  },
  { title: 'PriceChangeSummary', additionalProperties: false },
);
export type PriceChangeSummary = Static<typeof PriceChangeSummarySchema>;

export const PriceChangeSummaryQuerySchema = Type.Object(
  {
    since: Timestamp('The start of the period: changes observed at or after this instant, up to now'),
    series: Type.Optional(
      Type.Unsafe<ChangeSeries>({
        type: 'string',
        enum: [...CHANGE_SERIES],
        description:
          "Whose prices: `own` our own (as `competitor_id=own`), `competitors` every competitor's; absent: both",
      }),
    ),
  },
  { additionalProperties: false },
);
