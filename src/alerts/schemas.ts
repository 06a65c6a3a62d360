import { type Static, type TSchema, Type } from 'typebox';
import { ERRORS, type ErrorDetail } from '../http/errors.js';
import { Currency, Money, Nullable, OrNull, RequiredText, ResourceId, Timestamp } from '../http/fields.js';
import { checkRange } from '../pagination/filters.js';
import { AlertEventSchema } from './alert-event.js';
export { AlertEventSchema } from './alert-event.js';
import { CursorQuery, LimitQuery, listOf, SortQuery } from '../pagination/schemas.js';
import { numberToDecimal } from '../money/decimal.js';
import type { EngineRule } from './engine/rule.js';

/** Alert rules (design/API.md "Alerts", docs/ALERTS.md). */

export { CONDITION_TYPES, type ConditionType } from './condition-types.js';
import { CONDITION_TYPES, type ConditionType, SERIES_CHOICE_CONDITIONS } from './condition-types.js';

export const REARM_MODES = ['on_clear', 'cooldown', 'every_change'] as const;
export const SERIES = ['competitors', 'own'] as const;

export const PERCENT_MAX = 10_000;
export const DAYS_MAX = 365;
export const FAILURES_DEFAULT = 3;
export const FAILURES_MAX = 100;
export const COOLDOWN_MAX = 31_536_000;
export const CONFIRMATIONS_MAX = 100;
export const DAILY_CAP_MAX = 100_000;

/** A non-negative number with at most 4 decimal places (stored as numeric). */
const Percent = (maximum: number, description: string, exclusiveMinimum = true) =>
  Type.Number({
    format: 'percent',
    ...(exclusiveMinimum ? { exclusiveMinimum: 0 } : { minimum: 0 }),
    maximum,
    description: `${description}. At most 4 decimal places.`,
  });

const PositiveMoney = (description: string) => ({ ...Money(description), exclusiveMinimum: 0 });

const Series = Type.String({
  enum: [...SERIES],
  description:
    "Which price series the condition watches: `competitors` (default, the competitors' offers) or `own` (our own " +
    "shop's series of the product, recorded from its own listing or with `POST /prices` without a competitor)",
});

const condition = <T extends ConditionType, P extends Record<string, TSchema>>(
  type: T,
  props: P,
  description: string,
) =>
  Type.Object(
    { type: Type.Literal(type), ...props },
    { additionalProperties: false, title: `Condition_${type}`, description },
  );

const threshold = <T extends 'price_below' | 'price_above'>(type: T, words: string) =>
  condition(
    type,
    {
      threshold: Money('The price to compare with'),
      currency: Type.Optional({
        ...Currency,
        description: "Currency of `threshold` (ISO 4217); default: the product's",
      }),
      series: Type.Optional(Series),
    },
    `Fires when a series' new price is ${words} the threshold`,
  );

const change = <T extends 'price_drop' | 'price_rise'>(type: T, words: string) =>
  condition(
    type,
    {
      percent: Type.Optional(Percent(PERCENT_MAX, `Smallest ${words}, in percent of the previous price`)),
      amount: Type.Optional(PositiveMoney(`Smallest ${words}, in the series' currency`)),
      series: Type.Optional(Series),
    },
    `Fires when a series' new price ${words === 'drop' ? 'fell' : 'rose'} by at least \`percent\` and/or \`amount\` from its previous price (at least one of them; both: both must hold)`,
  );

const stock = <T extends 'back_in_stock' | 'out_of_stock'>(type: T, words: string) =>
  condition(type, { series: Type.Optional(Series) }, `Fires when a series' stock changes ${words}`);

export const CONDITION_VARIANTS = [
  threshold('price_below', 'below'),
  threshold('price_above', 'above'),
  change('price_drop', 'drop'),
  change('price_rise', 'rise'),
  condition(
    'undercut',
    {
      margin_percent: Type.Optional(Percent(100, 'How far below our price, in percent of it', false)),
      margin_amount: Type.Optional(Money("How far below our price, in our price's currency")),
    },
    "Fires when a competitor's new price is below our own price (`own_price` of `monitoring.position`) less the margin " +
      '(`margin_percent` or `margin_amount`, not both; neither: 0)',
  ),
  condition('not_cheapest', {}, "Fires when the product's rank goes from 1 to more than 1"),
  condition(
    'lowest_in_days',
    {
      days: Type.Integer({
        format: 'int32',
        minimum: 1,
        maximum: DAYS_MAX,
        description: `Days to look back, 1 to ${DAYS_MAX}`,
      }),
      series: Type.Optional(Series),
    },
    "Fires when a series' new price is the lowest it has had in that many days",
  ),
  stock('back_in_stock', 'from out of stock to in stock'),
  stock('out_of_stock', 'from in stock to out of stock'),
  condition(
    'listing_failing',
    {
      failures: Type.Optional(
        Type.Integer({
          format: 'int32',
          minimum: 1,
          maximum: FAILURES_MAX,
          description: `Failed checks in a row, 1 to ${FAILURES_MAX} (default ${FAILURES_DEFAULT})`,
        }),
      ),
    },
    "Fires when a listing's checks fail that many times in a row",
  ),
] as const;

/**
 * One of the ten condition objects, chosen by `type`. A `oneOf` with an OpenAPI discriminator:
 * the validator (src/http/validation.ts) then checks only the variant `type` names, so a bad
 * condition gets the errors of its own type instead of those of all ten.
 */
export const ConditionSchema = Type.Unsafe<Static<(typeof CONDITION_VARIANTS)[number]>>({
  type: 'object',
  oneOf: [...CONDITION_VARIANTS],
  discriminator: { propertyName: 'type' },
  title: 'AlertCondition',
  description: 'What the rule watches for; `type` says which of the condition objects it is',
});
export type Condition = Static<typeof ConditionSchema>;

const fields = {
  name: RequiredText(200, 'A name for the rule'),
  product_id: Nullable({ ...ResourceId('prod'), description: 'Only this product (null: every product)' }),
  competitor_id: Nullable({
    ...ResourceId('comp'),
    description: "Only this competitor's offers (null: every competitor)",
  }),
  listing_id: Nullable({
    ...ResourceId('lst'),
    description: 'Only this listing; implies its product and competitor, which may be left out or must match',
  }),
  rearm: Type.String({
    enum: [...REARM_MODES],
    description:
      'When the rule may fire again: `on_clear` (default) after the condition was false past `hysteresis_percent`; ' +
      '`cooldown` while it holds, but not within `cooldown_seconds`; `every_change` on every qualifying observation',
  }),
  hysteresis_percent: Percent(
    100,
    'With `on_clear`: how far past the threshold the condition must clear, in percent of it, 0 to 100 (default 0)',
    false,
  ),
  cooldown_seconds: Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: COOLDOWN_MAX,
    description: `With \`cooldown\`: seconds between firings, 0 to ${COOLDOWN_MAX} (a year; default 0)`,
  }),
  confirmations: Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: CONFIRMATIONS_MAX,
    description: `Observations in a row the condition must hold before the rule fires, 1 to ${CONFIRMATIONS_MAX} (default 1)`,
  }),
  daily_cap: OrNull(Type.Integer({ format: 'int32', minimum: 1, maximum: DAILY_CAP_MAX }), {
    description: `Most firings per UTC day, 1 to ${DAILY_CAP_MAX}; null (default): no cap`,
  }),
  enabled: Type.Boolean({ description: 'false: never evaluated (default true)' }),
  fire_existing: Type.Boolean({
    description:
      'What to do with the series (products, listings) that already meet the condition when the rule starts (see ' +
      '`POST /alerts/matches`): true fires them now; false (default) takes them in silently, so each fires once it ' +
      'has cleared and meets the condition again. Not stored. On PUT/PATCH only with a new condition or scope, which ' +
      'starts the rule afresh; never with a disabled rule.',
  }),
};

export const AlertCreateSchema = Type.Object(
  {
    name: fields.name,
    product_id: Type.Optional(fields.product_id),
    competitor_id: Type.Optional(fields.competitor_id),
    listing_id: Type.Optional(fields.listing_id),
    condition: ConditionSchema,
    rearm: Type.Optional(fields.rearm),
    hysteresis_percent: Type.Optional(fields.hysteresis_percent),
    cooldown_seconds: Type.Optional(fields.cooldown_seconds),
    confirmations: Type.Optional(fields.confirmations),
    daily_cap: Type.Optional(fields.daily_cap),
    enabled: Type.Optional(fields.enabled),
    fire_existing: Type.Optional(fields.fire_existing),
  },
  {
    title: 'AlertCreate',
    additionalProperties: false,
    description:
      'A rule. Scope: `product_id`, `competitor_id`, `listing_id` narrow it; all absent or null: the whole account.',
  },
);
export type AlertCreate = Static<typeof AlertCreateSchema>;

/** A rule body as POST /alerts/preview and /alerts/matches take it: a create body without `fire_existing`. */
const { fire_existing: _fireExisting, ...ruleBodyProperties } = AlertCreateSchema.properties;
export const RULE_BODY_PROPERTIES = ruleBodyProperties;

/** PUT and PATCH: only the fields sent change; `null` clears a scope field or the cap. */
export const AlertUpdateSchema = Type.Object(
  {
    name: Type.Optional(fields.name),
    product_id: Type.Optional(fields.product_id),
    competitor_id: Type.Optional(fields.competitor_id),
    listing_id: Type.Optional(fields.listing_id),
    condition: Type.Optional(ConditionSchema),
    rearm: Type.Optional(fields.rearm),
    hysteresis_percent: Type.Optional(fields.hysteresis_percent),
    cooldown_seconds: Type.Optional(fields.cooldown_seconds),
    confirmations: Type.Optional(fields.confirmations),
    daily_cap: Type.Optional(fields.daily_cap),
    enabled: Type.Optional(fields.enabled),
    fire_existing: Type.Optional(fields.fire_existing),
  },
  { title: 'AlertUpdate', additionalProperties: false },
);
export type AlertUpdate = Static<typeof AlertUpdateSchema>;

export const AlertSchema = Type.Object(
  {
    id: ResourceId('alrt'),
    object: Type.Literal('alert'),
    name: fields.name,
    product_id: fields.product_id,
    competitor_id: fields.competitor_id,
    listing_id: fields.listing_id,
    condition: ConditionSchema,
    rearm: fields.rearm,
    hysteresis_percent: fields.hysteresis_percent,
    cooldown_seconds: fields.cooldown_seconds,
    confirmations: fields.confirmations,
    daily_cap: fields.daily_cap,
    enabled: fields.enabled,
    created_at: Timestamp('When the rule was created (RFC 3339, UTC)'),
    updated_at: Timestamp('When the rule last changed (RFC 3339, UTC)'),
  },
  { title: 'Alert', additionalProperties: false },
);
export type Alert = Static<typeof AlertSchema>;

/** A rule as the engine and the checks below read it: every field present. */
export interface AlertRule {
  name: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  condition: Condition;
  rearm: (typeof REARM_MODES)[number];
  hysteresis_percent: number;
  cooldown_seconds: number;
  confirmations: number;
  daily_cap: number | null;
  enabled: boolean;
}

/**
 * A condition as stored and answered: the currency upper-cased and `failures` given its
 * default; other fields as sent (an absent `series` means competitors, an absent margin 0).
 */
export function normalizeCondition(c: Condition): Condition {
  if (c.type === 'price_below' || c.type === 'price_above') {
    return c.currency === undefined ? c : { ...c, currency: c.currency.toUpperCase() };
  }
  if (c.type === 'listing_failing') return { ...c, failures: c.failures ?? FAILURES_DEFAULT };
  return c;
}

/** A create body with every default filled in (scope fields null when absent). */
export function withDefaults(body: AlertCreate): AlertRule {
  return {
    name: body.name,
    product_id: body.product_id ?? null,
    competitor_id: body.competitor_id ?? null,
    listing_id: body.listing_id ?? null,
    condition: normalizeCondition(body.condition),
    rearm: (body.rearm ?? 'on_clear') as AlertRule['rearm'],
    hysteresis_percent: body.hysteresis_percent ?? 0,
    cooldown_seconds: body.cooldown_seconds ?? 0,
    confirmations: body.confirmations ?? 1,
    daily_cap: body.daily_cap ?? null,
    enabled: body.enabled ?? true,
  };
}

/** The rule as the engine reads it (`id` null: a body not stored, as a preview's). */
export const engineRuleOf = (id: string | null, rule: AlertRule): EngineRule => ({
  id,
  product_id: rule.product_id,
  competitor_id: rule.competitor_id,
  listing_id: rule.listing_id,
  condition_type: rule.condition.type,
  condition: rule.condition as EngineRule['condition'],
  rearm: rule.rearm,
  hysteresis_percent: numberToDecimal(rule.hysteresis_percent),
  cooldown_seconds: rule.cooldown_seconds,
  confirmations: rule.confirmations,
  daily_cap: rule.daily_cap,
});

/** The series a price or stock condition watches (undefined for the others). */
export const seriesOf = (c: Condition): 'competitors' | 'own' | undefined =>
  SERIES_CHOICE_CONDITIONS.includes(c.type)
    ? (((c as { series?: string }).series ?? 'competitors') as 'competitors' | 'own')
    : undefined;

/**
 * What a JSON Schema cannot say about a rule (a whole rule: for an update, the stored rule with
 * the changes applied). Throws our 422 with a detail per problem. `listingCompetitorId` is the
 * competitor of the rule's listing when the caller resolved it (undefined: not known; null: our own).
 */
export function checkAlertRule(
  rule: Pick<AlertRule, 'condition' | 'competitor_id' | 'listing_id'>,
  listingCompetitorId?: string | null,
): void {
  const details: ErrorDetail[] = [];
  const c = rule.condition;
  if ((c.type === 'price_drop' || c.type === 'price_rise') && c.percent === undefined && c.amount === undefined) {
    details.push({ field: 'condition', message: `${c.type} needs \`percent\`, \`amount\` or both` });
  }
  if (c.type === 'price_drop' && c.percent !== undefined && c.percent > 100) {
    details.push({
      field: 'condition.percent',
      message: 'must be at most 100: a price cannot drop by more than all of it',
    });
  }
  if (c.type === 'undercut' && c.margin_percent !== undefined && c.margin_amount !== undefined) {
    details.push({ field: 'condition', message: 'undercut takes `margin_percent` or `margin_amount`, not both' });
  }
  const series = seriesOf(c);
  const ownListing = rule.listing_id !== null && listingCompetitorId === null;
  const competitorListing = rule.listing_id !== null && typeof listingCompetitorId === 'string';
  if (series === 'own' && rule.competitor_id !== null && !competitorListing) {
    details.push({
      field: 'competitor_id',
      message: 'must be null for a condition with series "own": our own series has no competitor',
    });
  }
  if (series === 'own' && competitorListing) {
    details.push({
      field: 'listing_id',
      message: 'is a competitor\'s listing; a condition with series "own" watches our own listing only',
    });
  }
  if (series === 'competitors' && ownListing) {
    details.push({
      field: 'listing_id',
      message: 'is our own listing; set condition.series to "own" to watch its prices',
    });
  }
  if ((c.type === 'undercut' || c.type === 'not_cheapest') && ownListing) {
    details.push({
      field: 'listing_id',
      message: `is our own listing; ${c.type} compares competitors' offers with our price`,
    });
  }
  if (details.length > 0) throw ERRORS.validation(details, 'The alert rule is not valid');
}

export const AlertIdParams = Type.Object({ id: ResourceId('alrt') });

export const AlertListSchema = listOf(AlertSchema, 'AlertList');

export const ALERT_SORT_FIELDS = ['created_at', 'updated_at', 'name'] as const;

export const AlertListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(ALERT_SORT_FIELDS, '-created_at')),
    enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) rules' })),
    product_id: Type.Optional({ ...ResourceId('prod'), description: 'Only rules scoped to this product' }),
    competitor_id: Type.Optional({ ...ResourceId('comp'), description: 'Only rules scoped to this competitor' }),
    listing_id: Type.Optional({ ...ResourceId('lst'), description: 'Only rules scoped to this listing' }),
    condition_type: Type.Optional(
      Type.String({ enum: [...CONDITION_TYPES], description: 'Only rules with this condition type' }),
    ),
  },
  { additionalProperties: false },
);
export type AlertListQuery = Static<typeof AlertListQuerySchema>;

export const ALERT_EVENT_STATES = ['open', 'acknowledged'] as const;

export const AlertEventListQuerySchema = Type.Object(
  {
    limit: Type.Optional(LimitQuery),
    cursor: Type.Optional(CursorQuery),
    sort: Type.Optional(SortQuery(['created_at'], '-created_at')),
    alert_id: Type.Optional({ ...ResourceId('alrt'), description: 'Only events of this rule' }),
    product_id: Type.Optional({ ...ResourceId('prod'), description: 'Only events about this product' }),
    competitor_id: Type.Optional({ ...ResourceId('comp'), description: 'Only events about this competitor' }),
    state: Type.Optional(
      Type.String({
        enum: [...ALERT_EVENT_STATES],
        description: '`open`: not acknowledged yet; `acknowledged`: acknowledged',
      }),
    ),
    created_after: Type.Optional(Timestamp('Created at or after this instant')),
    created_before: Type.Optional(Timestamp('Created before this instant')),
  },
  { additionalProperties: false },
);
export type AlertEventListQuery = Static<typeof AlertEventListQuerySchema>;

export function checkAlertEventFilters(q: AlertEventListQuery): void {
  checkRange(q, 'created_after', 'created_before');
}

export const AlertEventIdParams = Type.Object({ id: ResourceId('alev') });

export const ACKNOWLEDGE_MAX = 1000;

export const AcknowledgeManySchema = Type.Object(
  {
    ids: Type.Array(ResourceId('alev'), {
      minItems: 1,
      maxItems: ACKNOWLEDGE_MAX,
      description: `Ids of alert events to acknowledge, 1 to ${ACKNOWLEDGE_MAX}`,
    }),
  },
  { title: 'AlertEventAcknowledge', additionalProperties: false },
);

export const AlertEventListSchema = listOf(AlertEventSchema, 'AlertEventList');

export const AcknowledgedSchema = Type.Object(
  {
    data: Type.Array(AlertEventSchema, {
      maxItems: ACKNOWLEDGE_MAX,
      description: 'The events acknowledged (now or before), oldest first',
    }),
    count: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: ACKNOWLEDGE_MAX,
      description: 'How many events `data` holds',
    }),
    not_found: Type.Array(ResourceId('alev'), {
      maxItems: ACKNOWLEDGE_MAX,
      description:
        "Ids sent that are not alert events of this account (never existed, deleted with their rule, or another account's)",
    }),
  },
  { title: 'AlertEventsAcknowledged', additionalProperties: false },
);
