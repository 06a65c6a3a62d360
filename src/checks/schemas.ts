import { type Static, Type } from 'typebox';
import type { Candidate, CandidateSource, Period } from '../extraction/index.js';
import { FETCH_ERROR_CODES } from '../fetcher/types.js';
import { publicId } from '../ids.js';
import {
  Currency,
  HttpUrl,
  iso,
  Money,
  Nullable,
  OrNull,
  RequiredText,
  ResourceId,
  Text,
  Timestamp,
} from '../http/fields.js';

/**
 * The result of one check of a listing, as `POST /listings/{id}/check` returns it and as
 * `GET /listings/{id}/checks` lists it (the listings routes use `CheckResultSchema` and
 * `toCheckResult` from here, so both stay one shape). Also the shapes of `POST /extract`.
 */

/** Why a check failed: the fetcher's codes, then the ones a check adds. */
export const CHECK_ERROR_CODES = [
  ...FETCH_ERROR_CODES,
  /** The page was fetched but holds no price the extractor trusts (`error.message` says why). */
  'no_price',
  /** A price was found but its currency is not stated: set the listing's `currency_override`. */
  'unknown_currency',
  /** A bug or a database failure while checking; logged. */
  'internal',
] as const;
export type CheckErrorCode = (typeof CHECK_ERROR_CODES)[number];

export const CANDIDATE_SOURCES = [
  'selector',
  'json-ld',
  'microdata',
  'rdfa',
  'meta',
  'platform:shopify',
  'platform:woocommerce',
  'platform:magento',
  'platform:bigcommerce',
  'visible',
] as const satisfies readonly CandidateSource[];
// Fails to compile when the extractor gains a source this list lacks.
const _allSources: (typeof CANDIDATE_SOURCES)[number] = '' as CandidateSource;
void _allSources;

export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'unknown'] as const;

export const PERIODS = ['day', 'week', 'month', 'year'] as const satisfies readonly Period[];
// Fails to compile when the extractor gains a period this list lacks.
const _allPeriods: (typeof PERIODS)[number] = '' as Period;
void _allPeriods;

/** At most this many candidates are kept per check (a category page can list hundreds). */
export const MAX_CANDIDATES = 100;
const MAX_TEXT = 1000;

const SOURCE_DESCRIPTION = 'Where the price was found, in order of preference';
const CandidateSourceSchema = Type.String({ enum: [...CANDIDATE_SOURCES], description: SOURCE_DESCRIPTION });

/**
 * One of `values` or null. (`Nullable` of src/http/fields.ts writes `type: ["string", "null"]`,
 * which with an `enum` lacking null would refuse null; so null goes into the enum too.)
 */
const NullableEnum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T | null>({ type: ['string', 'null'], enum: [...values, null], description });

export const CandidateSchema = Type.Object(
  {
    price: Money('The price this source gives, as an exact decimal number'),
    currency: Nullable({ ...Currency, description: 'Its currency, when known' }),
    source: CandidateSourceSchema,
    detail: Text(MAX_TEXT, 'Where in that source: JSON path, CSS selector, meta property, platform field'),
    raw: Text(MAX_TEXT, 'The value as the page wrote it'),
    availability: NullableEnum(AVAILABILITIES, 'Stock state this source gives; null: it gives none'),
    in_stock: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'true: in stock; false: out of stock or pre-order; null: not stated',
    }),
    range: Type.Union(
      [Type.Object({ low: Money('Low end'), high: Money('High end') }, { additionalProperties: false }), Type.Null()],
      { description: 'The price is the low end of this range (e.g. an AggregateOffer); null: a single price' },
    ),
    from: Type.Boolean({ description: 'The price is a starting price ("From $9.99")' }),
    period: NullableEnum(
      PERIODS,
      'The price is charged per this period ("$9.99/mo", "R$ 290/mês" are month); null: a one-off price, or the page does not say',
    ),
    ignored: Nullable(
      Text(
        MAX_TEXT,
        "Why this candidate could not be chosen (a list price, another product's price, ...); null: eligible",
      ),
    ),
    reason: Nullable(
      Text(
        MAX_TEXT,
        "The visible-price finder's score and signals for this price (`source` visible); null for other sources",
      ),
    ),
    confidence: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: 'How sure the visible-price finder is of the price it chose, 0 to 1; null for other candidates',
    }),
    evidence: Type.Union(
      [
        Type.Object(
          {
            path: Text(MAX_TEXT, "CSS path to the element showing the price; works as the listing's `selector`"),
            text: Text(MAX_TEXT, "The element's visible text"),
            snippet: Text(MAX_TEXT, 'A short stretch of the text around it'),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'Where the price shows on the page (visible prices, and a structured price the page confirms); null: not seen on the page',
      },
    ),
    chosen: Type.Boolean({
      description:
        'The extractor chose this candidate (the first not `ignored`): the price recorded when the check succeeded',
    }),
  },
  { title: 'PriceCandidate', additionalProperties: false },
);
export type CandidateJson = Static<typeof CandidateSchema>;

/** Listing ids (`lst_...`, src/listings). */
export const ListingIdSchema = ResourceId('lst');

/** `/listings/{id}/checks/{check_id}/...`: a check of a listing. */
export const HeldCheckParams = Type.Object(
  { id: ListingIdSchema, check_id: ResourceId('chk') },
  { additionalProperties: false },
);

const ERROR_CODE_DESCRIPTION =
  'Why the check failed, as a stable code (docs/MONITORING.md lists them); null when it succeeded';

/** What a check did with its reading (design/API.md "Checks: a price that cannot be right is held"). */
export const CHECK_OUTCOMES = ['recorded', 'failed', 'held'] as const;
export type CheckOutcomeName = (typeof CHECK_OUTCOMES)[number];

/** What became of a held reading (docs/MONITORING.md "Held readings"). */
export const HELD_STATES = ['pending', 'accepted', 'rejected', 'confirmed', 'superseded'] as const;
export type HeldState = (typeof HELD_STATES)[number];

/** Check ids (`chk_...`: src/ids.ts). */
export const CheckIdSchema = ResourceId('chk');

export const HeldSchema = Type.Object(
  {
    reason: Text(2000, 'Why the reading cannot be right, for a person'),
    previous_price: Money("The listing's last recorded price the reading was judged against"),
    previous_currency: { ...Currency, description: 'Currency of `previous_price`' },
    factor: OrNull(Type.Number({ minimum: 1 }), {
      description:
        'How many times apart the reading and `previous_price` are (4: a quarter, or four times, of it); null when the currencies differ or one of them is 0',
    }),
    confirmed_by: Nullable({
      ...CheckIdSchema,
      description:
        'On a check that recorded a held reading read again: the held check (the first reading). On that held check: the check that read it again. Null otherwise',
    }),
    state: Type.String({
      enum: [...HELD_STATES],
      description:
        '`pending`: waiting for its recheck or a person (accept or reject it); `accepted`: recorded by a person; `rejected`: dropped by a person; ' +
        '`confirmed`: read again by the next check and recorded by it; `superseded`: a later check recorded or held another price, or the listing was re-pointed',
    }),
    resolved_at: Nullable(
      Timestamp('When it was accepted, rejected or confirmed; null while pending or once superseded'),
    ),
  },
  { title: 'HeldReading', additionalProperties: false },
);
export type Held = Static<typeof HeldSchema>;

export const CheckResultSchema = Type.Object(
  {
    id: CheckIdSchema,
    object: Type.Literal('listing_check'),
    listing_id: ListingIdSchema,
    started_at: Timestamp('When the check started (RFC 3339, UTC)'),
    duration_ms: Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647 }),
    outcome: Type.String({
      enum: [...CHECK_OUTCOMES],
      description:
        '`recorded`: a price was read and recorded; `failed`: no price (see `error_code` and `error`); `held`: a price was read but ' +
        "cannot be right next to the listing's last one (see `held`): nothing was recorded",
    }),
    ok: Type.Boolean({ description: 'true only when `outcome` is `recorded`: a price was found and recorded' }),
    http_status: Type.Union([Type.Integer({ format: 'int32', minimum: 100, maximum: 599 }), Type.Null()], {
      description: "Status of the page's response; null when none came (refused address, timeout, DNS failure)",
    }),
    final_url: Nullable(Text(8192, "The page's address after redirects")),
    price: Type.Union([Money('The price read: recorded, or held'), Type.Null()]),
    currency: Nullable({ ...Currency, description: 'Currency of `price`' }),
    in_stock: Type.Union([Type.Boolean(), Type.Null()], { description: 'Stock state found; null: unknown' }),
    source: NullableEnum(CANDIDATE_SOURCES, `${SOURCE_DESCRIPTION}: the source of \`price\``),
    error_code: NullableEnum(CHECK_ERROR_CODES, ERROR_CODE_DESCRIPTION),
    error: Nullable(Text(2000, 'Why the check failed, for a person')),
    held: Type.Union([HeldSchema, Type.Null()], {
      description:
        'Why the reading was held and what became of it (`outcome` `held`), or which held reading this check confirmed (`outcome` `recorded`); null otherwise',
    }),
    candidates: Type.Array(CandidateSchema, {
      maxItems: MAX_CANDIDATES,
      description:
        'Every price found on the page, in order of preference, so you can see why one was chosen and pin a `selector`',
    }),
  },
  { title: 'ListingCheck', additionalProperties: false },
);
export type CheckResult = Static<typeof CheckResultSchema>;

/** A listing_checks row as the database returns it. */
export interface CheckRow {
  id: number;
  listing_id: string;
  started_at: Date;
  duration_ms: number;
  ok: boolean;
  http_status: number | null;
  final_url: string | null;
  price: string | null;
  currency: string | null;
  in_stock: boolean | null;
  source: string | null;
  error_code: string | null;
  error: string | null;
  candidates: StoredCandidate[];
  held_reason: string | null;
  held_previous_price: string | null;
  held_previous_currency: string | null;
  held_factor: number | null;
  read_at: Date | null;
  confirmed_by: number | string | null;
  held_resolution: 'accepted' | 'rejected' | 'confirmed' | null;
  resolved_at: Date | null;
  /** The check is its listing's pending held reading (listings.held_check_id). */
  held_pending: boolean;
}

/** The outcome of a stored check: recorded, held (a reason and not ok), else failed. */
export const outcomeOf = (r: Pick<CheckRow, 'ok' | 'held_reason'>): CheckOutcomeName =>
  r.ok ? 'recorded' : r.held_reason !== null ? 'held' : 'failed';

function heldOf(r: CheckRow): Held | null {
  if (r.held_reason === null) return null;
  const state: HeldState = r.ok ? 'confirmed' : (r.held_resolution ?? (r.held_pending ? 'pending' : 'superseded'));
  return {
    reason: r.held_reason,
    previous_price: Number(r.held_previous_price),
    previous_currency: r.held_previous_currency ?? '',
    factor: r.held_factor === null ? null : Number(r.held_factor),
    confirmed_by: r.confirmed_by === null ? null : publicId('chk', r.confirmed_by),
    state,
    resolved_at: r.resolved_at === null ? null : iso(r.resolved_at),
  };
}

/** A candidate as listing_checks.candidates holds it: checks stored before `period` (or the visible-price finder's fields) existed lack them. */
export type StoredCandidate = Omit<CandidateJson, 'period' | 'reason' | 'confidence' | 'evidence'> &
  Partial<Pick<CandidateJson, 'period' | 'reason' | 'confidence' | 'evidence'>>;

/** A listing_checks row as the API shows it (`select *` plus `held_pending` gives every column this needs). */
export function toCheckResult(r: CheckRow): CheckResult {
  return {
    id: publicId('chk', r.id),
    object: 'listing_check',
    listing_id: r.listing_id,
    started_at: iso(r.started_at),
    duration_ms: r.duration_ms,
    outcome: outcomeOf(r),
    ok: r.ok,
    http_status: r.http_status,
    final_url: r.final_url,
    price: r.price === null ? null : Number(r.price),
    currency: r.currency,
    in_stock: r.in_stock,
    source: r.source as CheckResult['source'],
    error_code: r.error_code as CheckResult['error_code'],
    error: r.error,
    held: heldOf(r),
    // Checks stored before candidates had a period have none: a one-off price as far as they know.
    candidates: r.candidates.map((c) => ({
      ...c,
      period: c.period ?? null,
      reason: c.reason ?? null,
      confidence: c.confidence ?? null,
      evidence: c.evidence ?? null,
    })),
  };
}

const clip = (s: string, max = MAX_TEXT) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** An extractor candidate as the API shows it (and as listing_checks.candidates stores it). */
export function toCandidateJson(c: Candidate, chosen: boolean): CandidateJson {
  return {
    price: Number(c.price),
    currency: c.currency ?? null,
    source: c.source,
    detail: clip(c.detail),
    raw: clip(c.raw),
    availability: c.availability ?? null,
    in_stock: c.inStock ?? null,
    range: c.range ? { low: Number(c.range.low), high: Number(c.range.high) } : null,
    from: c.from ?? false,
    period: c.period ?? null,
    ignored: c.ignored === undefined ? null : clip(c.ignored),
    reason: c.reason === undefined ? null : clip(c.reason),
    confidence: c.confidence ?? null,
    evidence: c.evidence
      ? { path: clip(c.evidence.path), text: clip(c.evidence.text), snippet: clip(c.evidence.snippet) }
      : null,
    chosen,
  };
}

// ---- POST /extract ----

export const ExtractRequestSchema = Type.Object(
  {
    url: HttpUrl('The page to fetch'),
    selector: Type.Optional(
      Nullable(
        RequiredText(1000, "CSS selector of the element that holds the price, tried before the page's structured data"),
      ),
    ),
    currency_override: Type.Optional(Nullable(Currency)),
    respect_robots: Type.Optional(
      Type.Boolean({ default: true, description: "Honour the site's robots.txt (default true)" }),
    ),
    render_js: Type.Optional(
      Type.Boolean({ default: false, description: 'Fetch with a real browser (default false)' }),
    ),
    visible_fallback: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Read the price the page shows when it has no structured one, and check the structured one against it (default true)',
      }),
    ),
  },
  { title: 'ExtractRequest', additionalProperties: false },
);
export type ExtractRequest = Static<typeof ExtractRequestSchema>;

export const ExtractResultSchema = Type.Object(
  {
    object: Type.Literal('extraction'),
    url: HttpUrl('The address asked for'),
    ok: Type.Boolean({
      description: 'true: a check of a listing with these settings would record `price`; false: see `error_code`',
    }),
    error_code: NullableEnum(CHECK_ERROR_CODES, ERROR_CODE_DESCRIPTION),
    error: Nullable(Text(2000, 'Why a check would fail, for a person')),
    fetch: Type.Union(
      [
        Type.Object(
          {
            final_url: Text(8192, 'Address after redirects'),
            status: Type.Integer({ format: 'int32', minimum: 100, maximum: 599, description: 'HTTP status' }),
            content_type: Nullable(Text(200, 'Content-Type of the response')),
            bytes: Type.Integer({
              format: 'int64',
              minimum: 0,
              maximum: 1_099_511_627_776,
              description: 'Size of the (decoded) body',
            }),
            ms: Type.Integer({
              format: 'int32',
              minimum: 0,
              maximum: 2_147_483_647,
              description: 'Time the fetch took',
            }),
            redirects: Type.Array(Text(8192, 'A redirect followed'), { maxItems: 20 }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The page response; null when none came (see `error`)' },
    ),
    price: Type.Union([Money('The price a check would record'), Type.Null()]),
    currency: Nullable({ ...Currency, description: 'Currency of `price`' }),
    in_stock: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'Stock state a check would record; null: unknown',
    }),
    source: NullableEnum(CANDIDATE_SOURCES, `${SOURCE_DESCRIPTION}: the source of \`price\``),
    availability: Type.String({ enum: [...AVAILABILITIES], description: 'Stock state read from the page' }),
    chosen: Type.Union([CandidateSchema, Type.Null()], {
      description: 'The candidate a check would record; null: none',
    }),
    candidates: Type.Array(CandidateSchema, {
      maxItems: MAX_CANDIDATES,
      description: 'Every price found, in order of preference',
    }),
    failure: Nullable(Text(2000, 'Why the extractor chose nothing; null when it chose a price')),
    notes: Type.Array(
      Text(2000, 'Something worth knowing: a selector that matched nothing, sources that disagree...'),
      { maxItems: 100 },
    ),
  },
  { title: 'Extraction', additionalProperties: false },
);
export type ExtractResult = Static<typeof ExtractResultSchema>;

export { DEFAULT_HOLD_FACTOR } from './hold.js';
