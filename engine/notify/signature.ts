/**
 * The generic webhook's signature: `X-Contract-Sync-Signature: sha256=<hex HMAC-SHA256 of the
 * body, keyed with the channel's secret>`, the form GitHub's webhooks use (X-Hub-Signature-256),
 * so that a receiver checks it in a few lines of any language (docs/notifications.md). Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Contract-Sync-Signature';

/** `sha256=<hex>` of `body` (the exact bytes sent, UTF-8). */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** What a receiver does: recompute, and compare in constant time. */
export function verifySignature(body: string, secret: string, header: string | undefined | null): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signBody(body, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
