export {
  createClient,
  take,
  type ClientOptions,
  type ListItem,
  type ListPath,
  type Method,
  type PricehoundClient,
  type SuccessData,
} from './client.js';
export {
  type BatchOptions,
  type ListingBatchItem,
  type ListingInput,
  type ListingsBatchResult,
  type PriceBatchItem,
  type PriceObservationInput,
  type PricesBatchResult,
  type ProductBatchItem,
  type ProductInput,
  type ProductsBatchResult,
} from './batches.js';
export { CsvError, CsvReader, csvCell, type CsvRecord, csvRow, type CsvValue, parseCsv, unguard } from './csv.js';
export { EtagCache } from './etag-cache.js';
export { ApiError, type ErrorDetail, NetworkError, PricehoundError, RateLimitError, TimeoutError } from './errors.js';
export {
  type AlertCondition,
  CONDITION_TYPES,
  type ConditionType,
  type Event,
  type EventData,
  type EventOf,
  EVENT_TYPES,
  type EventType,
} from './events.js';
export { BATCH_MAX, HISTORY_MAX_SPAN_DAYS, PAGE_SIZE_MAX, RAW_PAGE_MAX } from './limits.js';
export { type ImportedRow, type ImportOptions, importProducts, type ImportResult } from './product-import.js';
export {
  type ImportedListing,
  importListings,
  LISTING_CSV_COLUMNS,
  LISTING_CSV_REQUIRED,
  LISTING_IMPORT_ERROR_COLUMNS,
  ListingCsvReader,
  type ListingCsvRow,
  type ListingImportOptions,
  type ListingImportResult,
  listingImportErrorRows,
  readListingsCsv,
} from './listing-import.js';
export {
  IMPORT_ERROR_COLUMNS,
  importErrorRows,
  PRODUCT_CSV_COLUMNS,
  PRODUCT_CSV_REQUIRED,
  PRODUCT_EXPORT_COLUMNS,
  productCsvRow,
  ProductCsvReader,
  type ProductCsvRow,
  readProductsCsv,
} from './products-csv.js';
export type { RetryInfo, RetryOptions, Usage, UsageAlert } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from './webhooks.js';
export type { components, operations, paths } from './openapi.js';
