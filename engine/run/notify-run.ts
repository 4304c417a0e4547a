/**
 * Notifications of the runs (`notify:`, docs/notifications.md), hung off what a run returns: the
 * drift run tells each new drift once (remembered in the state store, engine/notify/dedupe.ts) and
 * each resolution once; a run that sent (apply, drift --fix) tells what it changed, what failed and
 * what a policy denied. Without channels nothing is read, sent or remembered. What fails is a
 * warning value for the run's outcome and report; the run's own result never changes, and all of
 * its notifications take at most the delivery deadline (30 s by default).
 */
import path from 'node:path';
import type { RunReport } from '../apply/run-report.ts';
import type { Config } from '../config/types.ts';
import type { DeliveryWarning } from '../diagnostic/delivery-warning.ts';
import type { DriftReport } from '../drift/types.ts';
import { READ_LIMITS, readTextBounded } from '../io/bounded-read.ts';
import { ciRun } from '../notify/ci-run.ts';
import { decideDriftNotifications } from '../notify/dedupe.ts';
import { driftNotifications, driftSightings } from '../notify/from-drift.ts';
import { runNotifications } from '../notify/from-run.ts';
import { sendAll, type SendAllOptions, type SentNotification } from '../notify/send-all.ts';
import type { Notification } from '../notify/types.ts';
import { commitUrl, repositoryLinks } from '../plan/file-links.ts';
import type { PlanDocument } from '../plan/types.ts';
import type { DriftKeyChanges, StateStore } from '../state/types.ts';
import type { DriftAttributions } from './drift-attribution.ts';
import type { RunEffects } from './types.ts';

type NotifyRunEffects = Pick<RunEffects, 'env' | 'cwd' | 'clock' | 'random' | 'notify' | 'signal'>;

function sendOptions(channels: Config['notify'], effects: NotifyRunEffects): SendAllOptions {
  const bounds = effects.notify?.delivery ?? {};
  return {
    channels: channels ?? [],
    sources: { env: effects.env, readFile: (file: string) => readTextBounded(path.resolve(effects.cwd, file), READ_LIMITS.secret) },
    delivery: {
      fetch: effects.notify?.fetch ?? globalThis.fetch,
      now: () => effects.clock.now(),
      sleep: (ms: number) => effects.clock.sleep(ms),
      random: effects.random ?? Math.random,
      ...bounds,
    },
    ...(bounds.deadlineMs === undefined ? {} : { deadlineMs: bounds.deadlineMs }),
  };
}

/** What every message of a run says besides its contracts: when, the commit (linked in CI), the CI run. */
function runContext(source: PlanDocument['source'], effects: NotifyRunEffects): Pick<Notification, 'time' | 'commit' | 'commitUrl' | 'run'> {
  const links = repositoryLinks(effects.env);
  const url = links === undefined || source.commit === null ? undefined : commitUrl(links, source.commit);
  const run = ciRun(effects.env);
  return {
    time: new Date(effects.clock.now()).toISOString(),
    ...(source.commit === null ? {} : { commit: source.commit }),
    ...(url === undefined ? {} : { commitUrl: url }),
    ...(run === undefined ? {} : { run }),
  };
}

/** Whether a run tells anything: channels configured, and the run not stopped (a stopped run ends at once). */
function tells(config: Config, effects: NotifyRunEffects): boolean {
  return (config.notify ?? []).length > 0 && effects.signal?.aborted !== true;
}

/** apply (not a dry run, not cancelled): what it changed, what failed, what a policy denied. */
export async function notifyAfterApply(config: Config, plan: PlanDocument, report: RunReport, effects: NotifyRunEffects): Promise<readonly DeliveryWarning[]> {
  if (!tells(config, effects)) return [];
  const notifications = runNotifications({ plan, report, command: 'contract-sync apply', ...runContext(report.source, effects) });
  if (notifications.length === 0) return [];
  return (await sendAll(notifications, sendOptions(config.notify, effects))).warnings;
}

export interface DriftNotifyInput {
  readonly config: Config;
  readonly drift: DriftReport;
  /** The run's plan: which contracts were read live (checked). */
  readonly plan: PlanDocument;
  /** With `--fix`: what the fix sent. */
  readonly fixRun?: RunReport;
  readonly attributions?: DriftAttributions;
  readonly store: StateStore;
}

/**
 * drift (and drift --fix): the drifts not told before, the remembered ones now gone, and with
 * `--fix` what it changed and what failed. A drift is remembered once told (some channel took its
 * message, or no channel hears of drift), so that when every channel failed the next run tells it
 * again; a resolution likewise.
 */
export async function notifyDrift(input: DriftNotifyInput, effects: NotifyRunEffects): Promise<readonly DeliveryWarning[]> {
  const { config, drift, plan, store } = input;
  if (!tells(config, effects)) return [];
  const warnings: DeliveryWarning[] = [];
  // A tenant that could not be checked (its token, its lock) is left as remembered.
  const tenants = drift.tenants.filter((tenant) => tenant.error === undefined);
  const previous: Record<string, Readonly<Record<string, string>>> = {};
  for (const tenant of tenants) {
    try {
      previous[tenant.tenant] = await store.readDriftKeys(tenant.tenant);
    } catch (error) {
      warnings.push(memoryWarning(tenant.tenant, 'read', error));
    }
  }
  const known = tenants.filter((tenant) => previous[tenant.tenant] !== undefined);
  const checked = Object.fromEntries(
    known.map((tenant) => [
      tenant.tenant,
      (plan.tenants.find((entry) => entry.tenant === tenant.tenant)?.contracts ?? [])
        .filter((contract) => contract.knownFrom === 'live')
        .map((contract) => contract.id),
    ]),
  );
  const corrected = Object.fromEntries(
    known.map((tenant) => [tenant.tenant, tenant.contracts.filter((contract) => contract.fix?.outcome === 'applied').map((contract) => contract.id)]),
  );
  const decision = decideDriftNotifications({ previous, drifted: known.flatMap(driftSightings), checked, corrected });
  const context = runContext(drift.source, effects);
  const notifications = known.flatMap((tenant) =>
    driftNotifications({
      tenant,
      decision,
      ...(input.attributions?.[tenant.tenant] ? { attributions: input.attributions[tenant.tenant] } : {}),
      ...(drift.findings === undefined ? {} : { findings: drift.findings }),
      ...context,
    }),
  );
  const afterFix = input.fixRun === undefined ? [] : runNotifications({ plan, report: input.fixRun, command: 'contract-sync drift --fix', ...context });
  const { sent, warnings: delivery } = await sendAll([...notifications, ...afterFix], sendOptions(config.notify, effects));
  warnings.push(...delivery);

  for (const tenant of known) {
    const changes = memoryChanges(previous[tenant.tenant]!, decision.next[tenant.tenant] ?? {}, untold(sent, tenant.tenant));
    if (Object.keys(changes).length === 0) continue;
    try {
      await store.writeDriftKeys(tenant.tenant, changes);
    } catch (error) {
      warnings.push(memoryWarning(tenant.tenant, 'write', error));
    }
  }
  return warnings;
}

/** Contracts of the tenant's drift and drift-resolved messages that no channel took: their memory stays as it was. */
function untold(sent: readonly SentNotification[], tenant: string): ReadonlySet<string> {
  return new Set(
    sent
      .filter(
        ({ notification, told }) => !told && notification.tenant === tenant && (notification.event === 'drift' || notification.event === 'drift-resolved'),
      )
      .flatMap(({ notification }) => notification.contracts.map((contract) => contract.id)),
  );
}

function memoryChanges(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>, keep: ReadonlySet<string>): DriftKeyChanges {
  const changes = new Map<string, string | null>();
  for (const [contractId, key] of Object.entries(after)) if (before[contractId] !== key && !keep.has(contractId)) changes.set(contractId, key);
  for (const contractId of Object.keys(before)) if (!Object.hasOwn(after, contractId) && !keep.has(contractId)) changes.set(contractId, null);
  return Object.fromEntries(changes);
}

function memoryWarning(tenant: string, doing: 'read' | 'write', error: unknown): DeliveryWarning {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    code: 'notify-memory',
    tenant,
    message: `tenant ${tenant}: the drift notifications' memory could not be ${doing === 'read' ? 'read' : 'written'} (${reason}); ${doing === 'read' ? 'no drift of the tenant was told' : 'the next run may tell the same drift again'}`,
  };
}
