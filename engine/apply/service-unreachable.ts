/**
 * A service that cannot be reached: a tenant's lane stops after a few connection failures in a row
 * (a refused connection, an unknown host, no connection within the timeout) instead of letting each
 * of its contracts spend its retries on its own. The request that was never connected was never
 * sent, so stopping is safe; a failure after sending (a reset, no answer) is not counted here.
 */
import { ApiError } from '../api/errors.ts';

/** Connection failures in a row, over every request of a tenant, after which its lane stops. */
export const UNREACHABLE_AFTER = 3;

/** Why a tenant's requests stopped: the service's host (from api.baseUrl) and what the connections said. */
export class ServiceUnreachable extends Error {
  readonly code = 'service-unreachable';
  readonly status = null;
  constructor(host: string, cause: ApiError, failures: number) {
    super(
      `the service at ${host} (api.baseUrl) cannot be reached: ${connectionProblem(cause)}, ${failures} times in a row; nothing more sent for this tenant`,
      {
        cause,
      },
    );
    this.name = 'ServiceUnreachable';
  }
}

/** A request whose connection was never made: no HTTP answer, and nothing sent (not ambiguous). */
export function isConnectionFailure(error: unknown): error is ApiError {
  return error instanceof ApiError && error.status === null && !error.ambiguous;
}

/** `connection refused (ECONNREFUSED)`: an ApiError's message without its request (`GET /contract/4711: `). */
function connectionProblem(error: ApiError): string {
  const separator = error.message.indexOf(': ');
  return separator === -1 ? error.message : error.message.slice(separator + 2);
}
