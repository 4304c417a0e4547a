/**
 * A request that got no HTTP answer, said in words. fetch (undici) rejects with a TypeError "fetch
 * failed" whose `cause` holds the system error (ECONNREFUSED, ENOTFOUND, ...), sometimes inside an
 * AggregateError (one per address tried). Pure.
 */

const WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  UND_ERR_SOCKET: 'connection closed',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed (try again later)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'the TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'a self-signed TLS certificate is in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the TLS certificate cannot be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the TLS certificate does not name the host',
};

/** The first error code in `error`, its causes (a few deep) and an AggregateError's errors. */
export function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      const inner = errors.map(networkErrorCode).find((found) => found !== undefined);
      if (inner !== undefined) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost message of the cause chain ("bad port"): what is left to say when there is no code. */
function innermostMessage(error: unknown): string | undefined {
  let message: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current.message !== '' && current.message !== 'fetch failed') message = current.message;
    current = current.cause;
  }
  return message;
}

/** `connection refused (ECONNREFUSED)`, `host not found (ENOTFOUND)`, or what the error says when it has no code. */
export function describeNetworkError(error: unknown): string {
  const code = networkErrorCode(error);
  if (code !== undefined) {
    const words = WORDS[code];
    return words === undefined ? `network error ${code}` : `${words} (${code})`;
  }
  const message = innermostMessage(error);
  return message === undefined ? 'network error' : `network error: ${message}`;
}
