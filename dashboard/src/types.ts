import type { components, paths } from '@pricehound/client';

/**
 * Names for the API's shapes as the pages read them, all from the types the typed client
 * generates from the OpenAPI document (`npm run client:generate`): a changed schema fails
 * `npm run typecheck`. The calls themselves go through the client (./api.ts), whose paths,
 * queries and bodies are checked against the same document; only the chart's choice of
 * intervals is narrowed here.
 */
type Schemas = components['schemas'];

/** The query parameters of GET `P` (e.g. the filters a list page sends). */
export type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;

export type Usage = Schemas['Usage'];
export type Product = Schemas['Product'];
export type Position = Schemas['ProductMonitoring']['position'];
export type Competitor = Schemas['Competitor'];
export type Listing = Schemas['Listing'];
export type ListingCreate = Schemas['ListingCreate'];
export type PriceChange = Schemas['PriceChange'];

export type ProductUpdate = Schemas['ProductUpdate'];

// ---- Checks and extraction ----

export type Candidate = Schemas['PriceCandidate'];
export type CheckResult = Schemas['ListingCheck'];
export type Extraction = Schemas['Extraction'];
export type ExtractRequest = Schemas['ExtractRequest'];

// ---- Price history and trends ----

/** One observation of interval=raw. */
export type Observation = Schemas['PriceHistoryObservation'];
export type Bucket = Schemas['PriceBucket'];
export type RawHistory = Schemas['PriceHistoryObservations'];
export type BucketHistory = Schemas['PriceHistoryBuckets'];
/** The intervals the chart offers: the API's, less `month`. */
export type Interval = Exclude<Schemas['PriceHistoryBuckets']['interval'], 'month'> | RawHistory['interval'];

export type Trends = Schemas['ProductTrends'];

// ---- Alerts (design/API.md "Alerts") ----

export type AlertRule = Schemas['Alert'];
export type AlertRuleInput = Schemas['AlertCreate'];
export type Condition = Schemas['AlertCondition'];
export type ConditionType = Condition['type'];
export type AlertEvent = Schemas['AlertEvent'];

/** POST /alerts/preview: a rule body and a range; the events it would have fired there. */
export type AlertPreview = Schemas['AlertPreview'];

/** POST /alerts/matches: a rule body; the series that meet its condition now (what `fire_existing` fires). */
export type AlertMatchQuery = Schemas['AlertMatchQuery'];
export type AlertMatches = Schemas['AlertMatches'];
export type AlertMatch = Schemas['AlertMatch'];

// ---- Webhooks (design/API.md "Events and webhooks") ----

export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type WebhookCreate = Schemas['WebhookCreate'];
export type Delivery = Schemas['WebhookDelivery'];

// ---- API keys (design/API.md "API keys over HTTP") ----

export type ApiKey = Schemas['ApiKey'];
export type ApiKeyWithSecret = Schemas['ApiKeyWithSecret'];
export type ApiKeyCreate = Schemas['ApiKeyCreate'];
export type KeyScope = ApiKey['scope'];
export type Plan = ApiKey['plan'];

/**
 * The plans from the lowest to the highest: a key may make keys of its own plan or below. The
 * order is the API's (its limits); `satisfies` and the check below keep the list equal to the
 * document's enum, so a plan added there fails `npm run typecheck` until it is placed here.
 */
export const PLAN_ORDER = ['free', 'starter', 'business'] as const satisfies readonly Plan[];
export const planCovered: [Exclude<Plan, (typeof PLAN_ORDER)[number]>] extends [never] ? true : false = true;
