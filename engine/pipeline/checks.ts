/**
 * The check stage's list: every check has one signature (a tenant's value in, findings out) and
 * says as data when it is judged, what its deny stops and where its findings are shown, so that a
 * new check (a policy rule, an approval, a change window) is a new entry, not an edit of a stage.
 *
 * Built in, in the order they are judged:
 * - `commit`: under the tenant's lock, with the run record read there (before the known state).
 * - `reviewed-plan`: a saved plan's contracts, each sent only as reviewed.
 * - `removal-guard`: a tenant whose plan removes too many members.
 */
import { judgeReviewed } from '../apply/reviewed-plan.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { ContractFields, KnownContracts } from '../model/types.ts';
import { evaluateChangePolicies, evaluateContractPolicies, type CompiledPolicies } from '../policy/index.ts';
import { countRemovals, judgeRemovals, type RemovalLimits } from '../plan/removal-guard.ts';
import type { PlanContract } from '../plan/types.ts';
import type { TenantRunRecord } from '../state/types.ts';

/** What a check is shown of a tenant. A check judged `locked` sees no known state and no plan yet. */
export interface TenantUnderCheck {
  readonly tenant: string;
  /** The tenant's run record as read under its lock; only in a run that sends. */
  readonly record?: TenantRunRecord;
  readonly known: KnownContracts;
  /** Every contract of the tenant as planned now (those with ops and those without). */
  readonly planned: readonly PlanContract[];
  /** What would be sent, as the checks judged before this one left it (a saved plan's contracts as reviewed). */
  readonly sending: readonly PlanContract[];
  /** Contracts an earlier run left uncertain, and why. */
  readonly uncertain: ReadonlyMap<string, string>;
  /** A planned contract's desired fields (what the desired state declares for it). */
  readonly desired: (contractId: string) => ContractFields | undefined;
}

export interface Check {
  /** The name its findings carry (and `--override-policy` would take). */
  readonly name: string;
  /** `locked`: under the tenant's lock, before its known state is read (runs that send only); `planned`: once it is planned. */
  readonly at: 'locked' | 'planned';
  /**
   * What a `deny` (or an `override` not lifted) stops: the contract it names, the tenant's whole
   * run, or the whole run (every tenant: nothing is sent, as a policy rule's deny stops an apply).
   */
  readonly denies: 'contract' | 'tenant' | 'run';
  /**
   * Where its findings are shown: `outcome` where the refusal they cause already shows them (the
   * tenant's error, a contract's failure); `findings` in every output's findings section.
   */
  readonly shownIn: 'outcome' | 'findings';
  /** How a contract it refuses is reported: `stale` (the saved-plan review) or `skipped`. */
  readonly refusedAs?: 'stale' | 'skipped';
  /** What a contract of a tenant it refuses says: `not sent: refused by the removal guard`. */
  readonly refusedBy?: string;
  judge(tenant: TenantUnderCheck): Promise<readonly Finding[]> | readonly Finding[];
  /**
   * Present on a check whose findings on a contract depend on that contract alone (the policy
   * rules): its findings on one planned contract, so that a plan written contract by contract
   * carries them with the contract (judge gives the same findings, contract after contract).
   */
  judgeContract?(tenant: Pick<TenantUnderCheck, 'tenant' | 'known' | 'desired'>, contract: PlanContract): readonly Finding[];
}

/** The commit check: a newer commit recorded while this run waited for the lock refuses the tenant (engine/run/commit-check.ts). */
export function commitCheck(judge: (tenant: string, record: TenantRunRecord | undefined) => Promise<string | undefined>): Check {
  return {
    name: 'commit',
    at: 'locked',
    denies: 'tenant',
    shownIn: 'outcome',
    async judge({ tenant, record }) {
      const reason = await judge(tenant, record);
      return reason === undefined ? [] : [{ check: 'commit', action: 'deny', tenant, message: reason }];
    },
  };
}

/**
 * The saved-plan review (`apply PLAN.json`): a reviewed contract is sent only when planning it now
 * gives its known fingerprint and exactly its ops (engine/apply/reviewed-plan.ts), and never when
 * an earlier run left it uncertain while the plan trusted the state store (a read would re-plan it
 * from a state the reviewer never saw).
 */
export function reviewedPlanCheck(reviewed: ReadonlyMap<string, ReadonlyMap<string, PlanContract>>, canRead: boolean): Check {
  return {
    name: 'reviewed-plan',
    at: 'planned',
    denies: 'contract',
    shownIn: 'outcome',
    refusedAs: 'stale',
    judge({ tenant, planned, sending, uncertain }) {
      const fresh = new Map(planned.map((contract) => [contract.id, contract]));
      const findings: Finding[] = [];
      for (const contract of sending) {
        const verdict = judgeReviewed(reviewed.get(tenant)?.get(contract.id) ?? contract, fresh.get(contract.id));
        const why = uncertain.get(contract.id);
        const reason =
          verdict.kind === 'stale'
            ? verdict.reason
            : why !== undefined && canRead && contract.knownFrom !== 'live'
              ? `stale plan: ${why}, so the state store the plan was made from may be behind the service; run contract-sync plan --refresh again`
              : undefined;
        if (reason !== undefined)
          findings.push({ check: 'reviewed-plan', action: 'deny', tenant, contractId: contract.id, file: contract.file, line: contract.line, message: reason });
      }
      return findings;
    },
  };
}

/** The removal guard (engine/plan/removal-guard.ts): a tenant whose ops to send remove too many members is refused. */
export function removalGuardCheck(limits: RemovalLimits): Check {
  return {
    name: 'removal-guard',
    at: 'planned',
    denies: 'tenant',
    shownIn: 'outcome',
    refusedBy: 'the removal guard',
    judge({ tenant, sending, known }) {
      const removals = countRemovals(tenant, sending, (contractId, field) => known.get(contractId)?.fields[field]?.length);
      const verdict = judgeRemovals(removals, limits);
      return verdict.kind === 'allowed' ? [] : [{ check: 'removal-guard', action: 'deny', tenant, message: verdict.reason }];
    },
  };
}

/** `--override-policy NAME ... --reason TEXT`: the `override` rules a run that sends lifts, recorded with who and why. */
export interface PolicyOverrides {
  readonly policies: readonly string[];
  readonly reason: string;
  readonly by: string;
}

/**
 * The config's policy rules (engine/policy/): `on: contract` rules over every planned contract's
 * desired fields, `on: change` rules over those with ops, each with what was known of it. A deny
 * (or an override) that no unexpired exception covers stops the whole run: apply and drift --fix
 * send nothing. The same evaluator validate uses, so that the same rules on the same contract give
 * the same findings in every run. `today` (UTC, from the run's clock) judges the exceptions.
 */
export function policyCheck(policies: CompiledPolicies, today: string, overrides?: PolicyOverrides): Check {
  /** An `override` finding of a rule the run lifts carries who lifted it and why; any other finding is as found. */
  function lifted(finding: Finding): Finding {
    if (overrides === undefined || finding.action !== 'override' || !overrides.policies.includes(finding.check)) return finding;
    return { ...finding, overridden: { reason: overrides.reason, by: overrides.by } };
  }
  function judgeContract({ tenant, known, desired }: Pick<TenantUnderCheck, 'tenant' | 'known' | 'desired'>, contract: PlanContract): Finding[] {
    const object = desired(contract.id);
    if (object === undefined) return [];
    const subject = { tenant, id: contract.id, object, file: contract.file, line: contract.line };
    const findings = evaluateContractPolicies(policies, subject, { today }).map(lifted);
    if (contract.ops.length === 0) return findings;
    const change = { ...subject, oldObject: known.get(contract.id)?.fields ?? null, knownFrom: contract.knownFrom, ops: contract.ops };
    return [...findings, ...evaluateChangePolicies(policies, change, { today }).map(lifted)];
  }
  return {
    name: 'policy',
    at: 'planned',
    denies: 'run',
    shownIn: 'findings',
    judge(tenant) {
      return tenant.planned.flatMap((contract) => judgeContract(tenant, contract));
    },
    judgeContract,
  };
}
