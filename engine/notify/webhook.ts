/**
 * The generic webhook's JSON body (version 1) and its headers: the event, a delivery id that stays
 * the same across retries (receivers drop repeats by it), and the signature. Pure. Fields and
 * attributions are sent; values are not, so that a receiver never holds contract data it did not
 * ask for (it can read the contract from the service).
 */
import { createHash } from 'node:crypto';
import { signBody, SIGNATURE_HEADER } from './signature.ts';
import type { Notification, OutgoingMessage } from './types.ts';
import { headline, nextStep } from './wording.ts';

export const WEBHOOK_BODY_VERSION = 1;

export function webhookBody(notification: Notification): string {
  return JSON.stringify({
    version: WEBHOOK_BODY_VERSION,
    event: notification.event,
    ...(notification.sample === true ? { sample: true } : {}),
    tenant: notification.tenant,
    time: notification.time,
    summary: headline(notification),
    contracts: notification.contracts.map((contract) => ({
      id: contract.id,
      ...(contract.file === undefined ? {} : { file: contract.file }),
      ...(contract.line === undefined ? {} : { line: contract.line }),
      ...(contract.reason === undefined ? {} : { reason: contract.reason }),
      fields: contract.fields.map(({ field, attribution }) => ({
        field,
        ...(attribution === undefined
          ? {}
          : attribution.attributed
            ? {
                changedBy: { actor: attribution.actor, time: attribution.time, ...(attribution.eventId === undefined ? {} : { eventId: attribution.eventId }) },
              }
            : { unattributed: attribution.reason }),
      })),
    })),
    ...(notification.commit === undefined ? {} : { commit: notification.commit }),
    ...(notification.commitUrl === undefined ? {} : { commitUrl: notification.commitUrl }),
    ...(notification.run === undefined ? {} : { run: notification.run }),
    next: nextStep(notification),
  });
}

/** Derived from the body: the same message gets the same id however often it is retried. */
export function deliveryId(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 32);
}

export function webhookMessage(notification: Notification, secret: string): OutgoingMessage {
  const body = webhookBody(notification);
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Contract-Sync-Event': notification.event,
      'X-Contract-Sync-Delivery': deliveryId(body),
      'Idempotency-Key': deliveryId(body),
      [SIGNATURE_HEADER]: signBody(body, secret),
    },
  };
}
