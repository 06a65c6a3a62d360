import { type Static, type TSchema, Type } from 'typebox';
import { MAX_MONEY, MONEY_DECIMALS } from '../money/decimal.js';

/**
 * Field builders shared by every resource. Strings refuse NUL (PostgreSQL text cannot hold it)
 * and always carry a maximum length.
 */
export const NO_NUL = '^[^\\u0000]*$';
// The visible character must itself not be NUL: \S alone matches NUL, which let "a\u0000b" through.
export const NOT_BLANK = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$';

export const Text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, pattern: NO_NUL, ...(description ? { description } : {}) });

/**
 * A label for people where nothing calls for markup, quotes or control characters (an API key's
 * name): letters, marks and digits of any script, spaces and `_ - . , : / ( ) # @ + &`, with at
 * least one letter or digit. Product names and other text from catalogues stay `Text`: they may
 * hold anything.
 */
// The lookahead, rather than `C*[LN]C*`, keeps the check linear: that form backtracks
// quadratically over a long run of letters ending in a refused character (a 1 MiB body).
export const LABEL_PATTERN = '^(?=.*[\\p{L}\\p{N}])[\\p{L}\\p{M}\\p{N} _.,:/()#@+&-]+$';
export const LABEL_RULE = 'letters, digits, spaces and _ - . , : / ( ) # @ + & only, with at least one letter or digit';

export const Label = (maxLength: number, description: string) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: LABEL_PATTERN,
    description: `${description}, up to ${maxLength} characters: ${LABEL_RULE}`,
  });

export const RequiredText = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: NOT_BLANK, ...(description ? { description } : {}) });

/**
 * A string or null, written as `type: ["string", "null"]` rather than anyOf: the response
 * serializer compiles a union into an ajv check per field per response (2.9 -> 1.2 us per
 * product in bench/), while a type list is a plain branch. Same JSON Schema meaning.
 */
export const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: ['string', 'null'] });

/**
 * A number, integer, boolean or object schema that also admits null, as `type: [T, 'null']`
 * rather than `anyOf`: fast-json-stringify serialises a type list with a typeof check, while an
 * anyOf makes it run an ajv validation per value to pick the branch (measurable per request on
 * every product). `extra` (a description, say) is merged in.
 */
export const OrNull = <T extends TSchema & { type: string }>(schema: T, extra: Record<string, unknown> = {}) =>
  Type.Unsafe<Static<T> | null>({ ...schema, ...extra, type: [schema.type, 'null'] });

export const Money = (description: string) =>
  Type.Number({
    format: 'money',
    minimum: 0,
    maximum: MAX_MONEY,
    description: `${description}. At most ${MONEY_DECIMALS} decimal places.`,
  });

/**
 * An amount converted into another currency: rounded to 4 decimals, but with a large rate it can
 * exceed the bounds of a stored price, hence no `maximum`. Null when no rate converts it.
 */
export const ConvertedMoney = (description: string) =>
  OrNull(Type.Number({ minimum: 0, description: `${description}. At most ${MONEY_DECIMALS} decimal places.` }));

/** A computed number that may be negative (a change, a percentage, an index), or null. */
export const SignedAmount = (description: string) => OrNull(Type.Number({ description }));

export const Currency = Type.String({
  format: 'iso4217',
  minLength: 3,
  maxLength: 3,
  description: 'ISO 4217 code; any case on input, upper case on output',
});

export const HttpUrl = (description: string) =>
  Type.String({
    format: 'uri',
    maxLength: 2048,
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/\\\\?#]',
    description: `${description} (http or https)`,
  });

export const Timestamp = (description: string) => Type.String({ format: 'date-time', maxLength: 40, description });

/** Ids are `prefix_` plus base32 (src/ids.ts); anything else (NUL bytes included) is simply not found. */
export const ResourceId = (prefix: string) =>
  Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: `^${prefix}_[0-9A-Za-z]+$`,
    description: `Opaque id starting with \`${prefix}_\``,
  });

export const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();
