/**
 * The API's shapes as the dashboard reads them: hand-written copies of the parts it uses, so the
 * browser build depends on nothing of the server's. The names say which schema each mirrors;
 * docs/API-DECISIONS.md and /api/v1/openapi.json are the reference.
 */

export interface Usage {
  object: 'usage';
  plan: string;
  limit: number;
  used: number;
  remaining: number;
  reset: number;
  history: { hour: string; requests: number; rejected: number }[];
}

export interface Position {
  own_price: number | null;
  own_price_source: 'observation' | 'base_price';
  competitors_compared: number;
  competitors_left_out: number;
  rank: number | null;
  price_index: number | null;
}

/** src/products/schemas.ts ProductSchema */
export interface Product {
  id: string;
  object: 'product';
  name: string;
  brand: string | null;
  sku: string | null;
  category: string | null;
  description: string | null;
  base_price: number;
  currency: string;
  url: string | null;
  created_at: string;
  updated_at: string;
  monitoring: {
    listing_count: number;
    lowest_competitor_price: { price: number; currency: string; competitor_id: string; listing_id: string; observed_at: string | null } | null;
    last_checked_at: string | null;
    position: Position;
  };
}

export type ProductInput = Partial<Pick<Product, 'name' | 'brand' | 'sku' | 'category' | 'description' | 'base_price' | 'currency' | 'url'>>;

/** src/competitors/schemas.ts */
export interface Competitor {
  id: string;
  name: string;
  website: string;
  domain: string;
  notes: string | null;
  listing_count: number;
}

/** src/listings/schemas.ts ListingSchema */
export interface Listing {
  id: string;
  product_id: string;
  competitor_id: string | null;
  url: string;
  selector: string | null;
  currency_override: string | null;
  check_interval_seconds: number;
  enabled: boolean;
  respect_robots: boolean;
  render_js: boolean;
  status: 'pending' | 'ok' | 'failing' | 'flagged';
  last_checked_at: string | null;
  last_success_at: string | null;
  last_price: number | null;
  last_currency: string | null;
  in_stock: boolean | null;
  last_error: string | null;
  consecutive_failures: number;
  next_check_at: string | null;
  warnings: { code: string; message: string }[];
  created_at: string;
}

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

interface Side {
  price: number;
  currency: string;
  in_stock: boolean | null;
  observed_at: string;
}

/** src/prices/changes/schemas.ts PriceChangeSchema */
export interface PriceChange {
  id: string;
  product_id: string;
  competitor_id: string | null;
  listing_id: string | null;
  observation_id: string;
  old: Side;
  new: Side;
  change: { amount: number; percent: number | null } | null;
  source: 'api' | 'scrape';
  created_at: string;
}

/** GET /price-changes/summary (src/prices/changes) */
export interface PriceChangeSummary {
  since: string;
  until: string;
  changes: number;
  up: number;
  down: number;
  back_in_stock: number;
  out_of_stock: number;
  average_percent: number | null;
  series_observed: number;
  series_unchanged: number;
}

// ---- Alerts (design/API.md "Alerts") ----

export type ConditionType =
  | 'price_below'
  | 'price_above'
  | 'price_drop'
  | 'price_rise'
  | 'undercut'
  | 'not_cheapest'
  | 'lowest_in_days'
  | 'back_in_stock'
  | 'out_of_stock'
  | 'listing_failing';

export interface Condition {
  type: ConditionType;
  threshold?: number;
  currency?: string;
  percent?: number;
  amount?: number;
  margin_percent?: number;
  margin_amount?: number;
  days?: number;
  failures?: number;
}

export interface AlertRule {
  id: string;
  name: string;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  condition: Condition;
  rearm: 'on_clear' | 'cooldown' | 'every_change';
  hysteresis_percent: number;
  cooldown_seconds: number;
  confirmations: number;
  daily_cap: number | null;
  enabled: boolean;
  created_at?: string;
}

export type AlertRuleInput = Omit<AlertRule, 'id' | 'created_at'>;

interface EventSide {
  price: number | null;
  currency: string | null;
  in_stock: boolean | null;
  observed_at: string | null;
}

export interface AlertEvent {
  id: string;
  alert_id: string;
  condition_type: ConditionType;
  product_id: string | null;
  competitor_id: string | null;
  listing_id: string | null;
  previous: EventSide | null;
  current: EventSide | null;
  message: string;
  test: boolean;
  acknowledged_at: string | null;
  created_at: string;
}

// ---- Webhooks (design/API.md "Events and webhooks") ----

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
] as const;

export interface Webhook {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  format: 'standard' | 'slack';
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string;
  created_at?: string;
}

export interface Delivery {
  id?: string;
  event_id: string;
  /** Not in design/API.md; shown when the server sends it. */
  event_type?: string;
  error?: string | null;
  attempt: number;
  status: 'succeeded' | 'failed' | 'pending';
  response_status: number | null;
  duration_ms: number | null;
  response_body: string | null;
  trigger: 'scheduled' | 'manual';
  created_at: string;
  next_attempt_at: string | null;
}
