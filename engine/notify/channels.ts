/**
 * Which channels hear of a notification (`on:` and `tenants:`), and a channel made ready to post:
 * its URL and key resolved from their `{env}`/`{file}` references (an adapter's work: the sources
 * are injected), the resolved URL held to the config's rule (https, http only to loopback), and its
 * message built. A channel that cannot be made ready is a warning, never a thrown failure.
 */
import { describeSecretRef, resolveSecret, SecretError, type SecretSources } from '../config/secrets.ts';
import type { NotifyChannel } from '../config/types.ts';
import { slackMessage } from './slack.ts';
import { teamsMessage } from './teams.ts';
import type { Notification, OutgoingMessage } from './types.ts';
import { webhookMessage } from './webhook.ts';

/** The channels subscribed to the notification's event and tenant, in config order. */
export function channelsFor(channels: readonly NotifyChannel[], notification: Pick<Notification, 'event' | 'tenant'>): NotifyChannel[] {
  return channels.filter(
    (channel) => channel.on.includes(notification.event) && (channel.tenants === undefined || channel.tenants.includes(notification.tenant)),
  );
}

/** A message ready to post, and where. `url` is a secret for Slack and Teams: never logged or shown. */
export interface ReadyDelivery {
  readonly channel: string;
  readonly url: string;
  readonly message: OutgoingMessage;
}

export type Preparation = { readonly ok: true; readonly delivery: ReadyDelivery } | { readonly ok: false; readonly channel: string; readonly warning: string };

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Why a resolved URL may not be posted to, if it may not. Never quotes it: it may be the credential. */
function urlRefusal(text: string): string | undefined {
  if (!URL.canParse(text)) return 'is not a URL';
  const url = new URL(text);
  if (url.protocol === 'https:') return url.username === '' && url.password === '' ? undefined : 'holds credentials';
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return undefined;
  return url.protocol === 'http:' ? `is http:// to ${url.hostname}, not a loopback host: use https://` : `is not https:// (${url.protocol})`;
}

async function resolved(channel: NotifyChannel, what: 'url' | 'secret', sources: SecretSources): Promise<{ value: string } | { warning: string }> {
  const ref = what === 'url' ? channel.url : channel.secret;
  if (typeof ref === 'string') return { value: ref };
  if (ref === undefined) return { warning: `notify channel ${channel.name}: no secret configured` };
  try {
    return { value: await resolveSecret(ref, sources) };
  } catch (error) {
    const reason = error instanceof SecretError ? error.message : `${describeSecretRef(ref)} cannot be read`;
    return { warning: `notify channel ${channel.name}: its ${what} cannot be resolved: ${reason}` };
  }
}

export async function prepareDelivery(channel: NotifyChannel, notification: Notification, sources: SecretSources): Promise<Preparation> {
  const url = await resolved(channel, 'url', sources);
  if ('warning' in url) return { ok: false, channel: channel.name, warning: url.warning };
  const refusal = urlRefusal(url.value);
  if (refusal !== undefined) {
    const where = typeof channel.url === 'string' ? 'its url' : `the url in ${describeSecretRef(channel.url)}`;
    return { ok: false, channel: channel.name, warning: `notify channel ${channel.name}: ${where} ${refusal}; nothing was sent` };
  }
  let message: OutgoingMessage;
  if (channel.kind === 'webhook') {
    const secret = await resolved(channel, 'secret', sources);
    if ('warning' in secret) return { ok: false, channel: channel.name, warning: secret.warning };
    message = webhookMessage(notification, secret.value);
  } else {
    message = channel.kind === 'slack' ? slackMessage(notification) : teamsMessage(notification);
  }
  return { ok: true, delivery: { channel: channel.name, url: url.value, message } };
}
