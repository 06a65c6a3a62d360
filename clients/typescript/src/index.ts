export { createClient, type ClientOptions, type ListItem, type ListPath, type Method, type PricehoundClient, type SuccessData } from './client.js';
export { BATCH_MAX, type BatchOptions, type PriceObservationInput, type PricesBatchResult, type ProductInput, type ProductsBatchResult } from './batches.js';
export { EtagCache } from './etag-cache.js';
export { ApiError, type ErrorDetail, NetworkError, PricehoundError, RateLimitError, TimeoutError } from './errors.js';
export type { RetryInfo, RetryOptions, Usage, UsageAlert } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from './webhooks.js';
export type { components, operations, paths } from './openapi.js';
