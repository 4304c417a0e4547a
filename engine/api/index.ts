export {
  apiClientSettings,
  checkPatchResponse,
  checkReadResponse,
  createApiClient,
  patchRequest,
  readRequest,
  type ApiClient,
  type ApiClientOptions,
  type ApiOutcome,
  type ReadOutcome,
} from './client.ts';
export { ApiError, classifyStatus, type ApiErrorDetails, type ApiFailureKind } from './errors.ts';
export { parseQuotaPolicy, parseRateLimit, parseRetryAfter, type HeaderSource, type QuotaPolicy, type RateLimitState } from './rate-headers.ts';
