export { ciRun } from './ci-run.ts';
export { channelsFor, prepareDelivery, type Preparation, type ReadyDelivery } from './channels.ts';
export { decideDriftNotifications, driftKey, type DriftDedupeDecision, type DriftDedupeInput, type DriftMemory, type DriftSighting } from './dedupe.ts';
export { deliver, DELIVERY_DEFAULTS, type DeliveryOptions, type DeliveryResult } from './deliver.ts';
export { signBody, SIGNATURE_HEADER, verifySignature } from './signature.ts';
export { slackMessage } from './slack.ts';
export { teamsMessage } from './teams.ts';
export type { CiRun, Notification, NotifyContract, NotifyField, OutgoingMessage } from './types.ts';
export { deliveryId, webhookBody, webhookMessage } from './webhook.ts';
