/**
 * The API's response shapes, as tests see them: every type here is derived from the one schema
 * (the OpenAPI document's components, generated into the typed client), so a test never
 * re-describes a shape and a changed schema shows up as a compile error in the tests that read it.
 */
import type { components } from '../../clients/typescript/src/index.js';

type S = components['schemas'];

/**
 * One answer of a batch (created or failed) with the other variant's fields readable as
 * `undefined`, so a test can write `item.product?.id` without narrowing first.
 */
type Either<A, B> =
  | (A & Partial<Record<Exclude<keyof B, keyof A>, undefined>>)
  | (B & Partial<Record<Exclude<keyof A, keyof B>, undefined>>);

/** A list answer's `data` and `pagination`, for any item shape. */
export interface Page<T> {
  data: T[];
  pagination: S['ProductList']['pagination'];
}

export type ApiError = S['Error'];

export type Product = S['Product'];
export type ProductBatchItem = Either<S['ProductBatchResultCreated'], S['ProductBatchResultFailed']>;
export type ProductBatchResult = Omit<S['ProductBatchResult'], 'data'> & { data: ProductBatchItem[] };
export type ProductPosition = S['ProductPosition'];

export type Competitor = S['Competitor'];
export type CompetitorAnalysis = S['CompetitorAnalysis'];

export type Listing = S['Listing'];
export type ListingBatchItem = Either<S['ListingBatchResultCreated'], S['ListingBatchResultFailed']>;
export type ListingBatchResult = Omit<S['ListingBatchResult'], 'data'> & { data: ListingBatchItem[] };
export type ListingCheck = S['ListingCheck'];

export type PriceObservation = S['PriceObservation'];
export type PriceObservationBatchItem = Either<
  S['PriceObservationBatchResultCreated'],
  S['PriceObservationBatchResultFailed']
>;
export type PriceObservationBatchResult = Omit<S['PriceObservationBatchResult'], 'data'> & {
  data: PriceObservationBatchItem[];
};
export type PriceChange = S['PriceChange'];
export type PriceChangeSummary = S['PriceChangeSummary'];
export type PriceHistory = S['PriceHistoryBuckets'];
export type PriceHistoryRaw = S['PriceHistoryObservations'];
export type PriceSeries = S['PriceSeries'];
export type PriceBucket = S['PriceBucket'];
export type ProductTrends = S['ProductTrends'];

export type Position = S['Position'];
export type PositionSummary = S['PositionSummary'];

export type Alert = S['Alert'];
export type AlertEvent = S['AlertEvent'];
export type AlertMatches = S['AlertMatches'];

export type Webhook = S['Webhook'];
export type WebhookWithSecret = S['WebhookWithSecret'];
/** An endpoint as list and create answers show it: the secret only on creation. */
export type WebhookMaybeSecret = Webhook & Partial<Pick<WebhookWithSecret, 'secret'>>;
export type WebhookDelivery = S['WebhookDelivery'];

export type Event = S['Event'];
type KeysOf<U> = U extends unknown ? keyof U : never;
/** Every field any member of the union `U` has, each optional, typed as the union of its members' types. */
type AnyOf<U> = { [K in KeysOf<U>]?: U extends { [P in K]?: infer V } ? (K extends keyof U ? V : never) : never };
/**
 * An event whose type the test picks at run time (e.g. `/events?type=${type}`): the common
 * envelope, and `data` with the fields of every event type's payload, each optional.
 */
export type AnyEvent = Omit<Event, 'data'> & { data: AnyOf<Event['data']> };
/** The event of one type, e.g. `EventOf<'alert.triggered'>`. */
export type EventOf<T extends Event['type']> = Extract<Event, { type: T }>;
export type EventList = S['EventList'];

export type ApiKey = S['ApiKey'];
export type ApiKeyWithSecret = S['ApiKeyWithSecret'];
/** A key as list and create answers show it: the secret only once, on creation. */
export type ApiKeyMaybeSecret = ApiKey & Partial<Pick<ApiKeyWithSecret, 'secret'>>;
export type EmailSubscription = S['EmailSubscription'];
export type ExchangeRate = S['ExchangeRate'];
export type Usage = S['Usage'];
