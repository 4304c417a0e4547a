/**
 * The notify-test run (`contract-sync notify test [--channel NAME]`): a sample message to each
 * configured channel (or one), marked as a test, and what each answered. Reads the config only: no
 * desired state, no token, no request to the service. A channel that fails is a result, not a
 * thrown failure; the command decides the exit code.
 */
import path from 'node:path';
import type { NotifyChannel } from '../config/types.ts';
import { READ_LIMITS, readTextBounded } from '../io/bounded-read.ts';
import { ciRun } from '../notify/ci-run.ts';
import { prepareDelivery } from '../notify/channels.ts';
import { deliver, type DeliveryResult } from '../notify/deliver.ts';
import type { Notification } from '../notify/types.ts';
import { closest } from '../text/suggest.ts';
import { readRepoConfig } from './config.ts';
import type { RunEffects, RunUnread } from './types.ts';

export interface NotifyTestRequest {
  readonly kind: 'notify-test';
  readonly where: { readonly repo: string; readonly config?: string };
  /** Only this channel (its `name`). */
  readonly channel?: string;
}

export interface NotifyTestEffects extends RunEffects {
  /** Default: globalThis.fetch. */
  readonly fetch?: typeof fetch;
}

export interface ChannelAnswer {
  readonly channel: string;
  readonly kind: NotifyChannel['kind'];
  readonly result: DeliveryResult;
}

export type NotifyTestOutcome =
  | Exclude<RunUnread, { kind: 'git-error' }>
  | { readonly kind: 'no-channels'; readonly configFile: string }
  | { readonly kind: 'notified'; readonly answers: readonly ChannelAnswer[] };

/** What a test message says: the channel's first event, for its first tenant, about one sample field. */
export function sampleNotification(channel: NotifyChannel, tenants: readonly string[], env: RunEffects['env'], time: string): Notification {
  const run = ciRun(env);
  return {
    event: channel.on[0]!,
    tenant: channel.tenants?.[0] ?? tenants[0] ?? 'tenant',
    time,
    sample: true,
    ...(run === undefined ? {} : { run }),
    contracts: [{ id: 'SAMPLE-1', fields: [{ field: 'Name', attribution: { field: 'Name', attributed: true, actor: 'contract-sync notify test', time } }] }],
  };
}

export async function runNotifyTest(request: NotifyTestRequest, effects: NotifyTestEffects): Promise<NotifyTestOutcome> {
  const read = await readRepoConfig(effects, request.where);
  if (read.config === undefined) return { kind: 'invalid-config', repoDir: read.repoDir, configFile: read.configFile, diagnostics: read.diagnostics };
  const { config } = read;
  const channels = config.notify ?? [];
  if (channels.length === 0) return { kind: 'no-channels', configFile: read.configFile };
  const names = channels.map((channel) => channel.name);
  const selected = request.channel === undefined ? channels : channels.filter((channel) => channel.name === request.channel);
  if (selected.length === 0) {
    const suggestion = closest(request.channel!, names);
    return {
      kind: 'bad-request',
      message: `no notify channel ${request.channel} in ${read.configFile}${suggestion ? `; did you mean ${suggestion}?` : ` (channels: ${names.join(', ')})`}`,
    };
  }
  const time = new Date(effects.clock.now()).toISOString();
  const sources = { env: effects.env, readFile: (file: string) => readTextBounded(path.resolve(effects.cwd, file), READ_LIMITS.secret) };
  const options = {
    fetch: effects.fetch ?? globalThis.fetch,
    now: () => effects.clock.now(),
    sleep: (ms: number) => effects.clock.sleep(ms),
    random: effects.random ?? Math.random,
  };
  // Every channel at once: the slowest bounds the run (the delivery deadline), not their sum.
  const answers = await Promise.all(
    selected.map(async (channel): Promise<ChannelAnswer> => {
      const ready = await prepareDelivery(channel, sampleNotification(channel, Object.keys(config.tenants), effects.env, time), sources);
      const result: DeliveryResult = ready.ok
        ? await deliver(ready.delivery, options)
        : { channel: channel.name, ok: false, status: null, attempts: 0, warning: ready.warning };
      return { channel: channel.name, kind: channel.kind, result };
    }),
  );
  return { kind: 'notified', answers };
}
