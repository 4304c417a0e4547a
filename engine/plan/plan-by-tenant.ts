/**
 * Planning against the state store one tenant at a time (issue 14): per tenant, its files are
 * validated, its known state read, its plan made and handed to the sink, and all of it dropped
 * before the next tenant. What stays across tenants is small: diagnostics, counters, the contracts
 * no longer managed. The plan written through the sink is the one createPlan makes of the whole
 * desired state; reading files, the state store and writing output are the caller's (injected).
 */
import type { Config } from '../config/types.ts';
import { validateByTenant } from '../desired/by-tenant.ts';
import { describeTargeting, selectTargets, type TargetOptions } from '../desired/target.ts';
import type { ContractSet, DesiredFile } from '../desired/types.ts';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import { findTouchedContracts } from './touched-contracts.ts';
import type { KnownContracts } from '../model/types.ts';
import { createPlan, planContract, planContractText, sortNoLongerManaged, tenantContracts, type PlanContractText, type TenantContract } from './create-plan.ts';
import { withDesiredChanges } from './create-plan.ts';
import { unknownOpCount, type DiffOptions } from './diff.ts';
import type { PlanContract, PlanDocument, PlanSource, PlanSummary, PlanTenant, PlanUnmanagedContract } from './types.ts';

/** What a plan document says before its tenants. */
export type PlanHeader = Pick<PlanDocument, 'version' | 'createdAt' | 'source'>;
/** What a plan document says after its tenants. */
export type PlanTrailer = Pick<PlanDocument, 'noLongerManaged' | 'summary' | 'madeWith' | 'findings'>;

/**
 * Where the plan goes, piece by piece: `start`, then each tenant in the plan's order, contract by
 * contract: a contract's plan is handed on as soon as it is made, so that none outlives its
 * rendering (a plan of every contract of a large repository is mostly first plans, each held for
 * as short a time as possible: less to collect, less memory at once).
 */
export interface PlanSink {
  /** Before the first tenant; called again when the run starts over: what was written is to be discarded. */
  start(header: PlanHeader): Promise<void> | void;
  /** A tenant's plan begins: its contracts follow in plan order, then `end`. */
  tenant(tenant: string): TenantPlanSink;
}

export interface TenantPlanSink {
  /** Optional, for a sink that judges the tenant at its end (the check stage): each contract as declared, before its plan. */
  desired?(contract: TenantContract): void;
  contract(contract: PlanContract): void;
  /**
   * Optional, for a sink that writes of a contract with nothing known only what
   * renderUnknownContractText writes (the text plan): such a contract comes here as itself (where
   * it is declared, its desired fields), and its plan (ops and changes) is not made. `touched`: as
   * its plan would say (only in a plan made with a base).
   */
  unknown?(contract: TenantContract, touched: boolean | undefined): void;
  /**
   * Optional, for a sink that writes only the text plan: a contract with known state comes here
   * instead of `contract`, its plan made without the known state's fingerprint (not hashed).
   */
  known?(contract: PlanContractText): void;
  /** After the tenant's last contract: what its contracts add up to. */
  end(counts: TenantPlanCounts): Promise<void> | void;
}

/** What a tenant's plan adds up to (what tenantCounts gives of the whole tenant). */
export interface TenantPlanCounts {
  readonly contracts: number;
  readonly changed: number;
  readonly ops: number;
  readonly unknown: number;
  /** Contracts the text plan lists: those with ops and, with a base, those touched. */
  readonly shown: number;
}

/** A TenantPlanSink that collects the tenant's plan whole and hands it to `onTenant` at its end (tests, small plans). */
export function wholeTenant(tenant: string, onTenant: (tenant: PlanTenant, counts: TenantPlanCounts) => Promise<void> | void): TenantPlanSink {
  const contracts: PlanContract[] = [];
  return {
    contract: (contract) => void contracts.push(contract),
    end: (counts) => onTenant({ tenant, contracts }, counts),
  };
}

export interface BaseInput {
  /** Desired-state files that differ between the merge base and the head. */
  readonly changedPaths: ReadonlySet<string>;
  /** What those files declared at the merge base. */
  readonly baseContractSets: readonly ContractSet[];
}

export interface PlanByTenantInput {
  /** Every desired-state file: all are validated, whichever tenants are planned. */
  readonly files: readonly DesiredFile[];
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
}

export interface PlanTargeting {
  readonly description: string;
  readonly unmatchedTargets: readonly string[];
  readonly unmatchedExcludes: readonly string[];
}

export interface PlanByTenantResult {
  /** With any, what the sink received is not a plan: nothing may be written. */
  readonly errors: Diagnostic[];
  readonly warnings: Diagnostic[];
  /** With targets or excludes; with unmatched targets, nothing may be written either. */
  readonly targeting?: PlanTargeting;
  readonly trailer: PlanTrailer;
  /** Contracts planned with their known state unknown. */
  readonly unknown: number;
}

function byTenant(sets: readonly ContractSet[]): Map<string, ContractSet[]> {
  const grouped = new Map<string, ContractSet[]>();
  for (const set of sets) {
    const group = grouped.get(set.tenant) ?? [];
    grouped.set(set.tenant, group);
    group.push(set);
  }
  return grouped;
}

interface Counters {
  tenants: number;
  contracts: number;
  changed: number;
  ops: number;
  touched: number;
  unknown: number;
  noLongerManaged: PlanUnmanagedContract[];
  total: number;
  selected: number;
  unmatched: Set<string>;
  usedExcludes: Set<string>;
}

function emptyCounters(): Counters {
  return {
    tenants: 0,
    contracts: 0,
    changed: 0,
    ops: 0,
    touched: 0,
    unknown: 0,
    noLongerManaged: [],
    total: 0,
    selected: 0,
    unmatched: new Set(),
    usedExcludes: new Set(),
  };
}

/** Plans `input.files` against the known state tenant by tenant, writing each tenant's plan to `deps.sink`. */
export async function planByTenant(input: PlanByTenantInput, deps: PlanByTenantDeps): Promise<PlanByTenantResult> {
  const { config, targets, base, source } = input;
  const planOptions = { createdAt: input.createdAt, source, collections: config.collections };
  // Checks the options (createdAt, base, collections) once, and gives the header exactly as createPlan writes it.
  const empty = createPlan([], new Map(), { ...planOptions, ...(base ? { touched: { contracts: new Map(), noLongerManaged: [] } } : {}) });
  const diffOptions: DiffOptions = { collections: config.collections ?? {} };
  const header: PlanHeader = { version: empty.version, createdAt: empty.createdAt, source: empty.source };
  const selected = input.tenants === undefined ? undefined : new Set(input.tenants);
  const targeted = targets !== undefined && (targets.targets.length > 0 || targets.excludes.length > 0);
  const baseSets = byTenant(base?.baseContractSets ?? []);
  const visited = new Set<string>();
  // Tenants whose contracts the targets were looked for in: a target of any other tenant matches nothing.
  const searched = new Set<string>();
  let counters = emptyCounters();

  async function planTenant(tenant: string, contractSets: readonly ContractSet[], errors: number): Promise<void> {
    visited.add(tenant);
    if (selected !== undefined && !selected.has(tenant)) return;
    const touched = base ? findTouchedContracts(contractSets, baseSets.get(tenant) ?? [], base.changedPaths) : undefined;
    if (touched) counters.noLongerManaged.push(...touched.noLongerManaged);
    let sets = contractSets;
    if (targeted) {
      const mine = {
        targets: targets.targets.filter((target) => target.tenant === tenant),
        excludes: targets.excludes.filter((exclude) => exclude.tenant === tenant),
      };
      counters.total += contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
      // A run with targets plans only them: a tenant none of them names plans nothing.
      const selection = targets.targets.length > 0 && mine.targets.length === 0 ? undefined : selectTargets(contractSets, mine);
      searched.add(tenant);
      if (selection?.kind === 'unmatched') {
        for (const raw of selection.unmatched) counters.unmatched.add(raw);
        return;
      }
      if (selection !== undefined)
        for (const exclude of mine.excludes) if (!selection.unmatchedExcludes.includes(exclude.raw)) counters.usedExcludes.add(exclude.raw);
      sets = selection?.contractSets ?? [];
      counters.selected += selection?.selected ?? 0;
    }
    // A run with errors (so far) or unmatched targets writes nothing: no need to plan further.
    if (sets.length === 0 || errors > 0 || counters.unmatched.size > 0) return;
    const known = await deps.readKnown(tenant);
    const touchedIds = touched ? (touched.contracts.get(tenant) ?? new Set<string>()) : undefined;
    const out = deps.sink.tenant(tenant);
    /** Hands the contract on as the sink takes it, and says what its plan counts. */
    function handOn(contract: TenantContract): { readonly ops: number; readonly unknown: boolean; readonly touched: boolean } {
      out.desired?.(contract);
      if (out.unknown !== undefined && known.get(contract.id) === undefined) {
        // Counted as its plan would count: every op is a Replace of a scalar or an Add of a member.
        const touched = touchedIds?.has(contract.id);
        out.unknown(contract, touched);
        return { ops: unknownOpCount(contract.fields), unknown: true, touched: touched === true };
      }
      let planned: PlanContractText;
      if (out.known === undefined) {
        const whole = withDesiredChanges(planContract(contract, known, touchedIds, diffOptions), tenant, touched?.desiredChanges);
        out.contract(whole);
        planned = whole;
      } else {
        planned = planContractText(contract, known, touchedIds, diffOptions);
        out.known(planned);
      }
      return { ops: planned.ops.length, unknown: planned.knownFrom === 'unknown', touched: planned.touched === true };
    }
    let contracts = 0;
    let changed = 0;
    let ops = 0;
    let unknown = 0;
    let shown = 0;
    for (const contract of tenantContracts(sets)) {
      const counted = handOn(contract);
      contracts += 1;
      if (counted.ops > 0) changed += 1;
      ops += counted.ops;
      if (counted.unknown) unknown += 1;
      if (counted.touched) counters.touched += 1;
      // The text plan lists a contract with ops and, with a base, a touched one.
      if (counted.ops > 0 || counted.touched) shown += 1;
    }
    counters.tenants += 1;
    counters.contracts += contracts;
    counters.changed += changed;
    counters.ops += ops;
    counters.unknown += unknown;
    await out.end({ contracts, changed, ops, unknown, shown });
  }

  await deps.sink.start(header);
  const result = await validateByTenant(input.files, config, {
    tenant: (tenant, contractSets, progress) => planTenant(tenant, contractSets, progress.errors),
    async restart() {
      visited.clear();
      searched.clear();
      counters = emptyCounters();
      await deps.sink.start(header);
    },
  });

  if (base) {
    // Tenants the head no longer declares at all: every contract the base declared is no longer managed.
    for (const [tenant, sets] of baseSets) {
      if (visited.has(tenant) || (selected !== undefined && !selected.has(tenant))) continue;
      counters.noLongerManaged.push(...findTouchedContracts([], sets, base.changedPaths).noLongerManaged);
    }
  }
  const summary: PlanSummary = { tenants: counters.tenants, contracts: counters.contracts, changed: counters.changed, ops: counters.ops };
  const noLongerManaged = sortNoLongerManaged(counters.noLongerManaged);
  const trailer: PlanTrailer = base
    ? { noLongerManaged, summary: { ...summary, touched: counters.touched, noLongerManaged: noLongerManaged.length } }
    : { summary };
  const targeting = targeted
    ? {
        description: describeTargeting(counters.selected, counters.total, targets),
        unmatchedTargets: targets.targets.filter((target) => counters.unmatched.has(target.raw) || !searched.has(target.tenant)).map((target) => target.raw),
        unmatchedExcludes: targets.excludes.filter((exclude) => !counters.usedExcludes.has(exclude.raw)).map((exclude) => exclude.raw),
      }
    : undefined;
  return { errors: result.errors, warnings: result.warnings, ...(targeting ? { targeting } : {}), trailer, unknown: counters.unknown };
}
