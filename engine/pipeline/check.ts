/**
 * The check stage: the run's checks (checks.ts), judged in order on each tenant. A check judged
 * `locked` runs under the tenant's lock before its known state is read (judgeLocked); the others
 * once it is planned (judgePlanned), each seeing what the checks before it left to send. Every
 * road to a plan judges through judgePlanned: the runs that learn through the pipeline
 * (checkTenant), the plan against the state store and the plan written tenant by tenant.
 */
import { findingCounts, type Finding } from '../diagnostic/finding.ts';
import type { ContractFields } from '../model/types.ts';
import type { Logger } from '../log/logger.ts';
import type { PlanContract } from '../plan/types.ts';
import type { Check } from './checks.ts';
import type { CheckedTenant, LearntTenant, PlannedTenant, RefusedContract, RunContext } from './tenant.ts';

/** Why nothing is sent for a tenant whose lock-time check denies it: the first deny's message (the tenant could not start). */
export async function judgeLocked(context: RunContext, tenant: LearntTenant): Promise<string | undefined> {
  for (const check of context.checks) {
    if (check.at !== 'locked') continue;
    const findings = await check.judge({
      tenant: tenant.tenant,
      ...(tenant.previousRun ? { record: tenant.previousRun } : {}),
      known: new Map(),
      planned: [],
      sending: [],
      uncertain: tenant.uncertain,
      desired: () => undefined,
    });
    const deny = findings.find((finding) => finding.action !== 'warn' && findingCounts(finding));
    if (deny !== undefined) return deny.message;
  }
  return undefined;
}

/** What a tenant's planned checks decided. */
export type CheckVerdict = Pick<CheckedTenant, 'findings' | 'shownFindings' | 'runDenials' | 'refused' | 'refusedContracts' | 'send'>;

/** What judgePlanned is shown of a tenant. */
export type TenantToJudge = Pick<PlannedTenant, 'tenant' | 'error' | 'previousRun' | 'known' | 'planned' | 'work' | 'uncertain'> & {
  /** The tenant's desired contracts by ContractId. */
  readonly desired: ReadonlyMap<string, { readonly fields: ContractFields }>;
};

/**
 * Judges a planned tenant with every check judged `planned`, in order. A tenant that could not
 * start is judged too (its saved-plan contracts are reported as the review finds them), though
 * nothing is sent for it whatever the checks say.
 */
export async function judgePlanned(checks: readonly Check[], tenant: TenantToJudge, logger?: Logger): Promise<CheckVerdict> {
  function desired(contractId: string): ContractFields | undefined {
    return tenant.desired.get(contractId)?.fields;
  }
  const fresh = new Map(tenant.planned.map((contract) => [contract.id, contract]));
  const refusedContracts = new Map<string, RefusedContract>();
  const findings: Finding[] = [];
  const shownFindings: Finding[] = [];
  const runDenials: Finding[] = [];
  let refused: CheckedTenant['refused'];
  // A contract sent goes as planned now (a saved plan's contract, judged as reviewed, is planned again).
  let sending: PlanContract[] = tenant.work.items.map((item) => item.contract);
  for (const check of checks) {
    if (check.at !== 'planned') continue;
    const found = await check.judge({
      tenant: tenant.tenant,
      ...(tenant.previousRun ? { record: tenant.previousRun } : {}),
      known: tenant.known,
      planned: tenant.planned,
      sending,
      uncertain: tenant.uncertain,
      desired,
    });
    findings.push(...found);
    if (check.shownIn === 'findings') shownFindings.push(...found);
    if (check.shownIn === 'findings') for (const finding of found) logFinding(logger, finding);
    for (const finding of found) {
      // A warning, or a finding an unexpired exception covers, is shown and refuses nothing.
      if (finding.action === 'warn' || !findingCounts(finding)) continue;
      if (check.denies === 'run') {
        runDenials.push(finding);
      } else if (check.denies === 'tenant' || finding.contractId === undefined) {
        if (refused === undefined && tenant.error === undefined) {
          refused = { check: check.name, reason: finding.message, notSent: `not sent: refused by ${check.refusedBy ?? `the check ${check.name}`}` };
          logger?.info({ tenant: tenant.tenant, check: check.name }, 'tenant refused by a check');
        }
      } else if (!refusedContracts.has(finding.contractId)) {
        refusedContracts.set(finding.contractId, { outcome: check.refusedAs ?? 'skipped', reason: finding.message });
      }
    }
    sending = sending.filter((contract) => !refusedContracts.has(contract.id)).map((contract) => fresh.get(contract.id) ?? contract);
  }
  return { findings, shownFindings, runDenials, refusedContracts, send: sending, ...(refused ? { refused } : {}) };
}

/**
 * For a plan written contract by contract: the findings of the checks that judge a contract alone
 * (Check.judgeContract, the policy rules) on `contract`, as it passes, so that it is written with
 * them. The tenant's other checks are judged at its end (judgePlanned with tenantwiseChecks).
 */
export function judgeContractwise(
  checks: readonly Check[],
  tenant: string,
  known: TenantToJudge['known'],
  desired: TenantToJudge['desired'],
  contract: PlanContract,
): Finding[] {
  const view = { tenant, known, desired: (contractId: string) => desired.get(contractId)?.fields };
  return checks.flatMap((check) => (check.at === 'planned' && check.shownIn === 'findings' && check.judgeContract ? check.judgeContract(view, contract) : []));
}

/** The checks judgeContractwise leaves to the tenant's end. */
export function tenantwiseChecks(checks: readonly Check[]): Check[] {
  return checks.filter((check) => !(check.at === 'planned' && check.shownIn === 'findings' && check.judgeContract));
}

/** A finding in the run's log, as every output shows it: the rule, the contract, what it does. */
function logFinding(logger: Logger | undefined, finding: Finding): void {
  logger?.info(
    {
      tenant: finding.tenant,
      ...(finding.contractId === undefined ? {} : { contractId: finding.contractId }),
      check: finding.check,
      action: finding.action,
      ...(finding.exception ? { exception: finding.exception.state } : {}),
      ...(finding.overridden ? { overriddenBy: finding.overridden.by } : {}),
      counts: findingCounts(finding),
    },
    'check finding',
  );
}

/** The check stage of a run that learnt through the pipeline. */
export async function checkTenant(context: RunContext, tenant: PlannedTenant): Promise<CheckedTenant> {
  context.progress.phase('check');
  const desired = context.desired.get(tenant.tenant) ?? new Map();
  return { ...tenant, ...(await judgePlanned(context.checks, { ...tenant, desired }, context.logger)) };
}

/** A tenant of a plan made outside the pipeline's learn stage (the state store read by the plan run): its updates are what would be sent. */
export function tenantToJudge(
  tenant: string,
  known: TenantToJudge['known'],
  planned: readonly PlanContract[],
  desired: TenantToJudge['desired'],
): TenantToJudge {
  return {
    tenant,
    known,
    planned,
    desired,
    work: { items: planned.filter((contract) => contract.action === 'update').map((contract) => ({ contract })), settle: [] },
    uncertain: new Map(),
  };
}
