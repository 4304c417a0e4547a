/**
 * The plan written tenant by tenant (a plan of every contract against the state store): the stages
 * read, scope, learn, plan and check, one tenant at a time. Each tenant is validated
 * (engine/desired/by-tenant.ts), scoped (engine/plan/scope.ts, as every run scopes), its known
 * state read from the state store, its plan made contract by contract into the sink
 * (engine/plan/plan-tenant.ts, as createPlan makes it) and judged at its end (check.ts, as every
 * run judges), and all of it dropped before the next tenant. What stays across tenants is small:
 * diagnostics, the scope's tally, counters, findings. The plan written through the sink is the one
 * createPlan makes of the whole desired state.
 */
import type { Config } from '../config/types.ts';
import { validateByTenant } from '../desired/by-tenant.ts';
import type { TargetOptions } from '../desired/target.ts';
import type { DesiredFile, DesiredFileList } from '../desired/types.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Finding } from '../diagnostic/finding.ts';
import type { ContractFields, KnownContracts } from '../model/types.ts';
import { createPlan, sortNoLongerManaged } from '../plan/create-plan.ts';
import type { DiffOptions } from '../plan/diff.ts';
import type { PlanContract, PlanSource, PlanSummary } from '../plan/types.ts';
import { planTenantContracts, type PlanHeader, type PlanSink, type PlanTrailer, type TenantPlanSink } from '../plan/plan-tenant.ts';
import { withContractFindings } from '../plan/policy-findings.ts';
import { ScopeTally, type BaseInput, type ScopedTenant, type ScopeTargeting } from '../plan/scope.ts';
import { judgeContractwise, judgePlanned, tenantToJudge, tenantwiseChecks } from './check.ts';
import type { Check } from './checks.ts';

export interface PlanByTenantInput {
  /** Every desired-state file (or their list, read tenant by tenant): all are validated, whichever tenants are planned. */
  readonly files: readonly DesiredFile[] | DesiredFileList;
  readonly config: Pick<Config, 'tenants' | 'collections'>;
  /** The tenants to plan; undefined: every tenant. */
  readonly tenants?: readonly string[];
  readonly targets?: TargetOptions;
  /** With `source.base`: what the change since the base did. */
  readonly base?: BaseInput;
  readonly createdAt: string;
  readonly source: PlanSource;
}

export interface PlanByTenantDeps {
  /** One tenant's known state (the state store's readTenant). */
  readKnown(tenant: string): Promise<KnownContracts>;
  readonly sink: PlanSink;
  /** The run's checks, judged on each tenant's plan at its end. */
  readonly checks?: readonly Check[];
}

export interface PlanByTenantResult {
  /** With any, what the sink received is not a plan: nothing may be written. */
  readonly errors: Diagnostic[];
  readonly warnings: Diagnostic[];
  /** With targets or excludes; with unmatched targets, nothing may be written either. */
  readonly targeting?: ScopeTargeting;
  /** What the document says after its tenants (without the findings). */
  readonly trailer: PlanTrailer;
  /** What the checks found that no outcome shows, in plan order. */
  readonly findings: readonly Finding[];
  /** Contracts planned with their known state unknown. */
  readonly unknown: number;
}

interface Counters {
  tenants: number;
  contracts: number;
  changed: number;
  ops: number;
  touched: number;
  unknown: number;
  findings: Finding[];
}

function emptyCounters(): Counters {
  return { tenants: 0, contracts: 0, changed: 0, ops: 0, touched: 0, unknown: 0, findings: [] };
}

/** Plans `input.files` against the known state tenant by tenant, writing each tenant's plan to `deps.sink`. */
export async function planByTenant(input: PlanByTenantInput, deps: PlanByTenantDeps): Promise<PlanByTenantResult> {
  const { config, targets, base, source } = input;
  const checks = deps.checks ?? [];
  // Checks the options (createdAt, base, collections) once, and gives the header exactly as createPlan writes it.
  const empty = createPlan([], new Map(), {
    createdAt: input.createdAt,
    source,
    collections: config.collections,
    ...(base ? { touched: { contracts: new Map(), noLongerManaged: [] } } : {}),
  });
  const diffOptions: DiffOptions = { collections: config.collections ?? {} };
  const header: PlanHeader = { version: empty.version, createdAt: empty.createdAt, source: empty.source };
  const selected = input.tenants === undefined ? undefined : new Set(input.tenants);
  const scopeOptions = { ...(targets ? { targets } : {}), ...(base ? { base } : {}) };
  let scope = new ScopeTally(scopeOptions);
  let counters = emptyCounters();

  async function planTenant(tenant: string, scoped: ScopedTenant): Promise<void> {
    const known = await deps.readKnown(tenant);
    const out = deps.sink.tenant(tenant);
    const judged = checks.length === 0 ? undefined : judging(out, checks, tenant, known);
    const marking = scoped.touched ? { ids: scoped.touched.ids, desiredChanges: scoped.touched.desiredChanges } : undefined;
    const counts = planTenantContracts(tenant, scoped.contractSets, known, marking, judged?.sink ?? out, diffOptions);
    counters.tenants += 1;
    counters.contracts += counts.contracts;
    counters.changed += counts.changed;
    counters.ops += counts.ops;
    counters.unknown += counts.unknown;
    counters.touched += counts.touched;
    if (judged) {
      const verdict = await judgePlanned(tenantwiseChecks(checks), tenantToJudge(tenant, known, judged.contracts, judged.desired));
      counters.findings.push(...judged.contractwise, ...verdict.shownFindings);
    }
    await out.end(counts);
  }

  await deps.sink.start(header);
  const result = await validateByTenant(input.files, config, {
    async tenant(tenant, contractSets, progress) {
      if (selected !== undefined && !selected.has(tenant)) return;
      const scoped = scope.scope(tenant, contractSets);
      // A run with errors (so far) or unmatched targets writes nothing: no need to plan further.
      if (scoped.contractSets.length === 0 || progress.errors > 0 || scope.unmatched > 0) return;
      await planTenant(tenant, scoped);
    },
    async restart() {
      scope = new ScopeTally(scopeOptions);
      counters = emptyCounters();
      await deps.sink.start(header);
    },
  });

  scope.finish(selected);
  const summary: PlanSummary = { tenants: counters.tenants, contracts: counters.contracts, changed: counters.changed, ops: counters.ops };
  const noLongerManaged = sortNoLongerManaged(scope.touched()?.noLongerManaged ?? []);
  const trailer: PlanTrailer = base
    ? { noLongerManaged, summary: { ...summary, touched: counters.touched, noLongerManaged: noLongerManaged.length } }
    : { summary };
  const targeting = scope.targeting();
  const { errors, warnings } = result;
  return { errors, warnings, ...(targeting ? { targeting } : {}), trailer, findings: counters.findings, unknown: counters.unknown };
}

/**
 * The tenant's sink with the check stage's view of it: each contract as declared and as planned,
 * kept until the tenant's end to be judged; the checks that judge a contract alone (the policy
 * rules) judged as it passes, so that it is written with its findings. Every contract is planned
 * whole (the checks see the plan as a document holds it), so the sink's shortcuts for a text-only
 * plan are not offered.
 */
function judging(
  out: TenantPlanSink,
  checks: readonly Check[],
  tenant: string,
  known: KnownContracts,
): {
  readonly sink: TenantPlanSink;
  readonly contracts: PlanContract[];
  readonly desired: Map<string, { readonly fields: ContractFields }>;
  readonly contractwise: Finding[];
} {
  const contracts: PlanContract[] = [];
  const desired = new Map<string, { readonly fields: ContractFields }>();
  const contractwise: Finding[] = [];
  return {
    contracts,
    desired,
    contractwise,
    sink: {
      desired(contract) {
        desired.set(contract.id, contract);
      },
      contract(contract) {
        contracts.push(contract);
        const own = judgeContractwise(checks, tenant, known, desired, contract);
        contractwise.push(...own);
        out.contract(withContractFindings(contract, own));
      },
      end: (counts) => out.end(counts),
    },
  };
}
