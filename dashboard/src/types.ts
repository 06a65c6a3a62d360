import type { components } from '../../clients/typescript/src/openapi';

/**
 * The API's shapes as the dashboard reads them. Where the OpenAPI document has the schema, the type
 * is the one generated from it (clients/typescript/src/openapi.ts, `npm run client:generate`):
 * type-only imports, so the bundle holds none of it and a changed schema fails `npm run typecheck`.
 * The rest are hand-written copies of the parts the pages use (the names say which schema each
 * mirrors; /api/v1/openapi.json is the reference).
 */
type Schemas = components['schemas'];

export type Usage = Schemas['Usage'];
export type Product = Schemas['Product'];
export type Position = Schemas['ProductMonitoring']['position'];
export type Competitor = Schemas['Competitor'];
export type Listing = Schemas['Listing'];
export type PriceChange = Schemas['PriceChange'];
export type PriceChangeSummary = Schemas['PriceChangeSummary'];

export type ProductInput = Partial<Pick<Product, 'name' | 'brand' | 'sku' | 'category' | 'description' | 'base_price' | 'currency' | 'url'>>;

/** src/products/schemas.ts ProductSchema */
/** src/checks/schemas.ts CandidateSchema */
export interface Candidate {
  price: number;
  currency: string | null;
  source: string;
  detail: string | null;
  raw: string | null;
  availability: string | null;
  in_stock: boolean | null;
  range: { low: number; high: number } | null;
  from: boolean;
  ignored: string | null;
  chosen: boolean;
}

/** src/checks/schemas.ts CheckResultSchema */
export interface CheckResult {
  id: string;
  listing_id: string;
  started_at: string;
  duration_ms: number;
  ok: boolean;
  http_status: number | null;
  final_url: string | null;
  price: number | null;
  currency: string | null;
  in_stock: boolean | null;
  source: string | null;
  error_code: string | null;
  error: string | null;
  candidates: Candidate[];
}

/** src/checks/schemas.ts ExtractResultSchema */
export interface Extraction {
  url: string;
  ok: boolean;
  error_code: string | null;
  error: string | null;
  fetch: { final_url: string; status: number; content_type: string | null; bytes: number; ms: number; redirects: string[] } | null;
  price: number | null;
  currency: string | null;
  in_stock: boolean | null;
  source: string | null;
  availability: string;
  chosen: Candidate | null;
  candidates: Candidate[];
  failure: string | null;
  notes: string[];
}

/** src/prices/history/schemas.ts: one observation of interval=raw */
export interface Observation {
  id: string;
  competitor_id: string | null;
  listing_id: string | null;
  price: number;
  currency: string;
  in_stock: boolean | null;
  observed_at: string;
  source: 'api' | 'scrape';
  samples: number;
}

export interface Bucket {
  start: string;
  end: string;
  open: number | null;
  close: number | null;
  min: number | null;
  max: number | null;
  average: number | null;
  count: number;
}

export interface HistorySeries {
  competitor_id: string | null;
  currency: string;
  buckets: Bucket[];
}

export type Interval = 'raw' | 'hour' | 'day' | 'week';

export interface RawHistory {
  interval: 'raw';
  data: Observation[];
  pagination: { has_more: boolean; next_cursor: string | null };
}

export interface BucketHistory {
  interval: Exclude<Interval, 'raw'>;
  from: string;
  to: string;
  series: HistorySeries[];
}

export interface PriceAt {
  price: number;
  at: string;
}

export interface SeriesStats {
  currency: string;
  lowest_ever: PriceAt | null;
  highest_ever: PriceAt | null;
  ranges: Record<'30d' | '90d' | '180d' | '365d', {
    average: number | null;
    lowest: PriceAt | null;
    highest: PriceAt | null;
    current_is_lowest: boolean | null;
    observations: number;
    out_of_stock_share: number | null;
  }>;
}

type PeriodChange = { from: number | null; from_currency: string | null; amount: number | null; percent: number | null };
export type Changes = Record<'24h' | '7d' | '30d', PeriodChange> | null;

/** src/prices/trends/schemas.ts TrendsSchema */
export interface Trends {
  currency: string;
  as_of: string;
  own: {
    source: 'observation' | 'base_price';
    price: number;
    currency: string;
    price_in_product_currency: number | null;
    in_stock: boolean | null;
    observed_at: string | null;
    price_since: string | null;
    changes: Changes;
    stats: SeriesStats | null;
  };
  comparison: {
    compared: number;
    left_out: { out_of_stock: number; no_rate: number };
    lowest: number | null;
    average: number | null;
    highest: number | null;
    rank: number | null;
    price_index: number | null;
    cheapest: { competitor_id: string; competitor_name: string; price_in_product_currency: number; tied: number; since: string } | null;
    stock: { in_stock: number; out_of_stock: number; unknown: number };
  };
  competitors: {
    competitor_id: string;
    competitor_name: string;
    price: number;
    currency: string;
    in_stock: boolean | null;
    observed_at: string;
    listing_id: string | null;
    price_in_product_currency: number | null;
    compared: 'yes' | 'out_of_stock' | 'no_rate';
    price_since: string;
    changes: Changes;
    stats: SeriesStats | null;
  }[];
}

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
  'price.changed',
  'stock.changed',
  'alert.triggered',
  'webhook.test',
  'endpoint.disabled',
] as const satisfies readonly EventType[];
