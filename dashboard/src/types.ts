import type { components } from '../../clients/typescript/src/openapi';

/**
 * The API's shapes as the dashboard reads them. Where the OpenAPI document has the schema, the type
 * is the one generated from it (clients/typescript/src/openapi.ts, `npm run client:generate`):
 * type-only imports, so the bundle holds none of it and a changed schema fails `npm run typecheck`.
 * Every response type here is one of the document's schemas; only inputs the pages assemble
 * (ProductInput) and the chart's choice of intervals are narrowed from them.
 */
type Schemas = components['schemas'];

export type Usage = Schemas['Usage'];
export type Product = Schemas['Product'];
export type Position = Schemas['ProductMonitoring']['position'];
export type Competitor = Schemas['Competitor'];
export type Listing = Schemas['Listing'];
export type PriceChange = Schemas['PriceChange'];
export type PriceChangeSummary = Schemas['PriceChangeSummary'];

export type ProductBatchResult = Schemas['ProductBatchResult'];

export type ProductInput = Partial<Pick<Product, 'name' | 'brand' | 'sku' | 'category' | 'description' | 'base_price' | 'currency' | 'url'>>;

// ---- Checks and extraction ----

export type Candidate = Schemas['PriceCandidate'];
export type CheckResult = Schemas['ListingCheck'];
export type Extraction = Schemas['Extraction'];

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
export type AlertEventsAcknowledged = Schemas['AlertEventsAcknowledged'];

/** POST /alerts/preview: a rule body and a range; the events it would have fired there. */
export type AlertPreview = Schemas['AlertPreview'];
export type AlertPreviewResult = Schemas['AlertPreviewResult'];

// ---- Webhooks (design/API.md "Events and webhooks") ----

export type Webhook = Schemas['Webhook'];
export type WebhookWithSecret = Schemas['WebhookWithSecret'];
export type WebhookCreate = Schemas['WebhookCreate'];
export type EventType = Webhook['event_types'][number];
export type Delivery = Schemas['WebhookDelivery'];
export type RedeliverResult = Schemas['RedeliverResult'];
/** The event POST /webhooks/{id}/test queued. */
export type ApiEvent = Schemas['Event'];

/** Every event type, for the endpoint form; `satisfies` keeps it in step with the document. */
export const EVENT_TYPES = [
  'product.created',
  'product.updated',
  'product.deleted',
  'competitor.created',
  'competitor.updated',
  'competitor.deleted',
  'listing.created',
  'listing.updated',
  'listing.deleted',
  'listing.check_failed',
  'listing.price_held',
  'price.changed',
  'stock.changed',
  'alert.triggered',
  'webhook.test',
  'endpoint.disabled',
] as const satisfies readonly EventType[];

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
