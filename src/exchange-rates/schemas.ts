import { type Static, Type } from 'typebox';
import { Currency, Timestamp } from '../http/fields.js';
import { CursorQuery, LimitQuery, listOf } from '../pagination/schemas.js';

/** Rates are JSON numbers that a double carries exactly: at most 12 decimal places and 15 significant digits. */
export const RATE_MAX = 1_000_000_000;
export const RATE_DECIMALS = 12;
export const RATE_DIGITS = 15;

const Rate = Type.Number({
  exclusiveMinimum: 0,
  maximum: RATE_MAX,
  description:
    `How many units of \`quote\` one unit of \`base\` is worth: above 0, at most ${RATE_MAX}, with at most ` +
    `${RATE_DECIMALS} decimal places and ${RATE_DIGITS} significant digits (so it comes back exactly as sent)`,
});

export const ExchangeRatePutSchema = Type.Object(
  { rate: Rate },
  { title: 'ExchangeRatePut', additionalProperties: false },
);
export type ExchangeRatePut = Static<typeof ExchangeRatePutSchema>;

export const ExchangeRateSchema = Type.Object(
  {
    object: Type.Literal('exchange_rate', {
      description:
        '1 `base` = `rate` `quote`; used for `base` -> `quote`, and inverted for `quote` -> `base` unless that pair has its own rate',
    }),
    base: { ...Currency, description: 'ISO 4217 code of the currency converted from' },
    quote: { ...Currency, description: 'ISO 4217 code of the currency converted into' },
    rate: Rate,
    created_at: Timestamp('When the rate was first set (RFC 3339, UTC)'),
    updated_at: Timestamp('When the rate last changed (RFC 3339, UTC)'),
  },
  // No description of its own: responses carry theirs, and the document's schema must be one (src/openapi/components.ts).
  { title: 'ExchangeRate', additionalProperties: false },
);
export type ExchangeRate = Static<typeof ExchangeRateSchema>;

export const ExchangeRateListSchema = listOf(ExchangeRateSchema, 'ExchangeRateList');

export const ExchangeRateListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    base: Type.Optional({ ...Currency, description: 'Only rates from this currency (any case)' }),
    quote: Type.Optional({ ...Currency, description: 'Only rates into this currency (any case)' }),
  },
  { additionalProperties: false },
);

/** As documented: two ISO 4217 codes. */
export const PairParams = Type.Object({
  base: { ...Currency, description: 'ISO 4217 code of the currency converted from (any case)' },
  quote: { ...Currency, description: 'ISO 4217 code of the currency converted into (any case)' },
});

/**
 * As validated: any short text. A bad code is a 422 naming it (checked by the handler, see
 * pair() in routes/pair.ts), where a schema failure of a path parameter would be a 404.
 */
export const LoosePairParams = Type.Object({
  base: Type.String({ maxLength: 200 }),
  quote: Type.String({ maxLength: 200 }),
});
