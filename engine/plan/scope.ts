/**
 * The scope stage, the one place where a run decides which of a tenant's declared contracts it
 * plans and what the change since the base did to them. Every road to a plan goes through it: the
 * whole desired state read at once (engine/run/input.ts: apply, drift, a plan document) calls it
 * for each tenant, and the plan written tenant by tenant (engine/pipeline/stream.ts) as each
 * tenant is validated. Pure: a tenant's contract sets in, its scope out; `ScopeTally` adds the
 * tenants up into what the run says of its targeting and of the contracts no longer managed.
 *
 * - Targets and excludes (engine/desired/target.ts): a run with targets plans only them, so a tenant
 *   none of them names plans nothing.
 * - Touched contracts (touched-contracts.ts): with a base, those the change adds or edits, and the
 *   contracts the base declared that the head no longer does.
 */
import { describeTargeting, isTargeted, selectTargets, type TargetOptions } from '../desired/target.ts';
import type { ContractSet } from '../desired/types.ts';
import { findTouchedContracts } from './touched-contracts.ts';
import type { DesiredChange, PlanTouched, PlanUnmanagedContract } from './types.ts';

/** What the change since the base did: the desired-state files it touched, and what those declared at the base. */
export interface BaseInput {
  /** Desired-state files that differ between the merge base and the head. */
  readonly changedPaths: ReadonlySet<string>;
  /** What those files declared at the merge base. */
  readonly baseContractSets: readonly ContractSet[];
}

/** How a run narrows what it plans: targets and excludes, and the change since a base. */
export interface ScopeOptions {
  readonly targets?: TargetOptions;
  readonly base?: BaseInput;
}

/** What targeting did to one tenant. */
interface TenantTargeting {
  readonly declared: number;
  readonly selected: number;
  /** Targets of this tenant that name no contract it declares (then nothing of it is planned). */
  readonly unmatched: readonly string[];
  /** Excludes of this tenant that left a contract out. */
  readonly usedExcludes: readonly string[];
  /** Some of its contracts were left out and some kept. */
  readonly narrowed: boolean;
}

/** One tenant's scope: the contract sets it plans, and, with a base, what the change touched. */
export interface ScopedTenant {
  readonly tenant: string;
  /** Its contract sets narrowed to the targets (all of them when the run has none). */
  readonly contractSets: readonly ContractSet[];
  /** With a base: the tenant's touched contracts and those no longer managed. */
  readonly touched?: TenantTouched;
  readonly targeting?: TenantTargeting;
}

export interface TenantTouched {
  readonly ids: ReadonlySet<string>;
  readonly noLongerManaged: readonly PlanUnmanagedContract[];
  readonly desiredChanges: ReadonlyMap<string, readonly DesiredChange[]>;
}

/** What a run says of its targeting: the description, the tenants narrowed, what matched nothing. */
export interface ScopeTargeting {
  /** `Targeted run: 2 of 180 contracts (--target acme/4711 ...).` */
  readonly description: string;
  /** Tenants planned with some of their contracts left out: their run record keeps its commit. */
  readonly narrowed: ReadonlySet<string>;
  /** Targets that match no declared contract: the run is refused. */
  readonly unmatchedTargets: readonly string[];
  readonly unmatchedExcludes: readonly string[];
}

/**
 * The scope of `tenant`, whose head declares `contractSets` (the base's sets are those of every
 * tenant: the tenant's own are picked here).
 */
export function scopeTenant(tenant: string, contractSets: readonly ContractSet[], options: ScopeOptions): ScopedTenant {
  const { targets, base } = options;
  const touched = base ? tenantTouched(tenant, contractSets, base) : undefined;
  if (targets === undefined || !isTargeted(targets)) return { tenant, contractSets, ...(touched ? { touched } : {}) };
  const mine = {
    targets: targets.targets.filter((target) => target.tenant === tenant),
    excludes: targets.excludes.filter((exclude) => exclude.tenant === tenant),
  };
  const declared = contractSets.reduce((sum, set) => sum + set.contracts.length, 0);
  const none = { tenant, contractSets: [], ...(touched ? { touched } : {}) };
  // A run with targets plans only them: a tenant none of them names plans nothing.
  if (targets.targets.length > 0 && mine.targets.length === 0) {
    return { ...none, targeting: { declared, selected: 0, unmatched: [], usedExcludes: [], narrowed: false } };
  }
  const selection = selectTargets(contractSets, mine);
  if (selection.kind === 'unmatched') {
    return { ...none, targeting: { declared, selected: 0, unmatched: selection.unmatched, usedExcludes: [], narrowed: false } };
  }
  const usedExcludes = mine.excludes.filter((exclude) => !selection.unmatchedExcludes.includes(exclude.raw)).map((exclude) => exclude.raw);
  return {
    tenant,
    contractSets: selection.contractSets,
    ...(touched ? { touched } : {}),
    targeting: { declared, selected: selection.selected, unmatched: [], usedExcludes, narrowed: selection.narrowed.has(tenant) },
  };
}

function tenantTouched(tenant: string, contractSets: readonly ContractSet[], base: BaseInput): TenantTouched {
  const found = findTouchedContracts(
    contractSets,
    base.baseContractSets.filter((set) => set.tenant === tenant),
    base.changedPaths,
  );
  return { ids: found.contracts.get(tenant) ?? new Set(), noLongerManaged: found.noLongerManaged, desiredChanges: found.desiredChanges ?? new Map() };
}

/**
 * The run's scope, tenant by tenant as each is scoped: its targeting, and with a base the whole
 * change's marking (`touched()`, as createPlan takes it). A tenant the base declared and the head
 * no longer declares at all is scoped by `finish`: every contract it declared is no longer managed.
 */
export class ScopeTally {
  readonly #options: ScopeOptions;
  readonly #searched = new Set<string>();
  readonly #unmatched = new Set<string>();
  readonly #usedExcludes = new Set<string>();
  readonly #narrowed = new Set<string>();
  readonly #touched = new Map<string, ReadonlySet<string>>();
  readonly #desiredChanges = new Map<string, readonly DesiredChange[]>();
  readonly #noLongerManaged: PlanUnmanagedContract[] = [];
  #declared = 0;
  #selected = 0;

  constructor(options: ScopeOptions) {
    this.#options = options;
  }

  /** Scopes `tenant` (scopeTenant) and counts it. */
  scope(tenant: string, contractSets: readonly ContractSet[]): ScopedTenant {
    const scoped = scopeTenant(tenant, contractSets, this.#options);
    this.#searched.add(tenant);
    const { targeting, touched } = scoped;
    if (touched) {
      this.#touched.set(tenant, touched.ids);
      this.#noLongerManaged.push(...touched.noLongerManaged);
      for (const [key, changes] of touched.desiredChanges) this.#desiredChanges.set(key, changes);
    }
    if (targeting) {
      this.#declared += targeting.declared;
      this.#selected += targeting.selected;
      for (const raw of targeting.unmatched) this.#unmatched.add(raw);
      for (const raw of targeting.usedExcludes) this.#usedExcludes.add(raw);
      if (targeting.narrowed) this.#narrowed.add(tenant);
    }
    return scoped;
  }

  /** Every tenant of `contractSets` at once (a run that reads the whole desired state); their sets, scoped, tenant after tenant. */
  scopeAll(contractSets: readonly ContractSet[]): ContractSet[] {
    const byTenant = new Map<string, ContractSet[]>();
    for (const set of contractSets) {
      const sets = byTenant.get(set.tenant) ?? [];
      byTenant.set(set.tenant, sets);
      sets.push(set);
    }
    return [...byTenant].flatMap(([tenant, sets]) => this.scope(tenant, sets).contractSets);
  }

  /** Targets that matched nothing so far: a run with any writes nothing, and may stop planning. */
  get unmatched(): number {
    return this.#unmatched.size;
  }

  /** After the last tenant: the tenants of `selected` (every tenant when undefined) that only the base declares. */
  finish(selected: ReadonlySet<string> | undefined): void {
    const { base } = this.#options;
    if (!base) return;
    const gone = base.baseContractSets.filter((set) => !this.#searched.has(set.tenant) && (selected === undefined || selected.has(set.tenant)));
    this.#noLongerManaged.push(...findTouchedContracts([], gone, base.changedPaths).noLongerManaged);
  }

  /** With a base: the marking of every tenant scoped (createPlan's `touched`). */
  touched(): PlanTouched | undefined {
    if (!this.#options.base) return undefined;
    return { contracts: this.#touched, noLongerManaged: this.#noLongerManaged, desiredChanges: this.#desiredChanges };
  }

  /** With targets or excludes: what the run says of them (the description is empty when a target matched nothing). */
  targeting(): ScopeTargeting | undefined {
    const { targets } = this.#options;
    if (targets === undefined || !isTargeted(targets)) return undefined;
    const unmatchedTargets = targets.targets
      .filter((target) => this.#unmatched.has(target.raw) || !this.#searched.has(target.tenant))
      .map((target) => target.raw);
    if (unmatchedTargets.length > 0) return { description: '', narrowed: new Set(), unmatchedTargets, unmatchedExcludes: [] };
    return {
      description: describeTargeting(this.#selected, this.#declared, targets),
      narrowed: this.#narrowed,
      unmatchedTargets: [],
      unmatchedExcludes: targets.excludes.filter((exclude) => !this.#usedExcludes.has(exclude.raw)).map((exclude) => exclude.raw),
    };
  }
}
