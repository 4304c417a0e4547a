/** What every reader of the service's answers (the CMS client, the audit reader) says of a request, and how it reads an answer's JSON. */
import { AnswerTooLargeError } from '../io/bounded-body.ts';
import { ApiError } from './errors.ts';
import type { ApiRequest } from './http-transport.ts';

/** `GET /contract/4711`: the request as its errors name it (the path only: a query may carry ids a log need not). */
export function describeRequest(request: ApiRequest): string {
  return `${request.method} ${new URL(request.url).pathname}`;
}

/** The answer's body as JSON; a body that is not JSON is a permanent failure of the request. */
export function parseAnswerJson(request: ApiRequest, status: number, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(`${describeRequest(request)}: the answer is not JSON`, {
      kind: 'permanent',
      status,
      excerpt: '',
      ambiguous: false,
      cause: error,
    });
  }
}

/**
 * A 2xx answer whose body could not be read, as an ApiError: past the bound, permanent (the same
 * request would answer the same); else retryable, the body having broken off (`ambiguous`: whether
 * a request that may have acted is to be said uncertain).
 */
export function unreadBodyError(request: ApiRequest, status: number, error: unknown, ambiguous: boolean): ApiError {
  if (error instanceof AnswerTooLargeError) {
    return new ApiError(`${describeRequest(request)}: ${error.message}`, { kind: 'permanent', status, excerpt: '', ambiguous: false, cause: error });
  }
  return new ApiError(`${describeRequest(request)}: the answer broke off`, { kind: 'retryable', status: null, excerpt: '', ambiguous, cause: error });
}
