/**
 * Adapter: a run's notifications to the channels that hear of them, all within one bound. Each
 * message goes to each subscribed channel (`on:`, `tenants:`) on its own, a few at a time; every
 * delivery gets what is left of the run's deadline, so that notifications delay a run by at most
 * `deadlineMs` however many there are and whatever the receivers do. A delivery that cannot start
 * before the deadline is not sent, and says so. Never throws: what failed is a warning value.
 */
import type { SecretSources } from '../config/secrets.ts';
import type { NotifyChannel } from '../config/types.ts';
import type { DeliveryWarning } from '../diagnostic/delivery-warning.ts';
import { channelsFor, prepareDelivery } from './channels.ts';
import { deliver, DELIVERY_DEFAULTS, type DeliveryOptions, type DeliveryResult } from './deliver.ts';
import type { Notification } from './types.ts';

export interface SendAllOptions {
  readonly channels: readonly NotifyChannel[];
  readonly sources: SecretSources;
  /** fetch, the clock, sleep and jitter, and each delivery's attempt timeout and backoff. */
  readonly delivery: DeliveryOptions;
  /** Every delivery of the run, waits included; default DELIVERY_DEFAULTS.deadlineMs (30 s). */
  readonly deadlineMs?: number;
  /** Deliveries in flight at once; default 8. */
  readonly concurrency?: number;
}

export interface SentNotification {
  readonly notification: Notification;
  /** One per subscribed channel, in config order. */
  readonly results: readonly DeliveryResult[];
  /**
   * Some channel took it, or none hears of it: what it says may be remembered as told. False only
   * when every subscribed channel failed: a drift is then told again by the next run.
   */
  readonly told: boolean;
}

export interface SendAllResult {
  readonly sent: readonly SentNotification[];
  readonly warnings: readonly DeliveryWarning[];
}

export async function sendAll(notifications: readonly Notification[], options: SendAllOptions): Promise<SendAllResult> {
  const { delivery } = options;
  const deadline = delivery.now() + (options.deadlineMs ?? DELIVERY_DEFAULTS.deadlineMs);
  const jobs = notifications.flatMap((notification, index) => channelsFor(options.channels, notification).map((channel) => ({ index, notification, channel })));
  const results: DeliveryResult[] = new Array<DeliveryResult>(jobs.length);

  async function run(job: (typeof jobs)[number]): Promise<DeliveryResult> {
    const { channel, notification } = job;
    const left = deadline - delivery.now();
    if (left < 1) {
      const warning = `notify channel ${channel.name}: not sent: the notifications' ${options.deadlineMs ?? DELIVERY_DEFAULTS.deadlineMs} ms were spent`;
      return { channel: channel.name, ok: false, status: null, attempts: 0, warning };
    }
    const ready = await prepareDelivery(channel, notification, options.sources);
    if (!ready.ok) return { channel: channel.name, ok: false, status: null, attempts: 0, warning: ready.warning };
    return deliver(ready.delivery, { ...delivery, deadlineMs: Math.min(delivery.deadlineMs ?? DELIVERY_DEFAULTS.deadlineMs, left) });
  }

  let next = 0;
  async function worker(): Promise<void> {
    while (next < jobs.length) {
      const at = next++;
      results[at] = await run(jobs[at]!);
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, jobs.length) }, () => worker()));

  const warnings: DeliveryWarning[] = [];
  const sent = notifications.map((notification, index): SentNotification => {
    const own = jobs.flatMap((job, at) => (job.index === index ? [results[at]!] : []));
    for (const result of own) {
      if (result.ok) continue;
      const what = `the ${notification.event} message of tenant ${notification.tenant}`;
      const message = result.warning.endsWith('the message was not delivered')
        ? `${result.warning.slice(0, -'the message was not delivered'.length)}${what} was not delivered`
        : `${result.warning} (${what})`;
      warnings.push({ code: 'notify-delivery', channel: result.channel, event: notification.event, tenant: notification.tenant, message });
    }
    return { notification, results: own, told: own.length === 0 || own.some((result) => result.ok) };
  });
  return { sent, warnings };
}
