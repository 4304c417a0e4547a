/**
 * One tenant's plan (the plan stage, tenant by tenant): its contracts in plan order, each planned
 * against the tenant's known contracts and handed on as soon as it is made, and what they add up
 * to. createPlan collects them into the plan document; the plan written tenant by tenant
 * (engine/pipeline/stream.ts) hands them to a sink that writes them and lets them go. Pure.
 */
import type { ContractSet } from '../desired/types.ts';
import type { KnownContracts } from '../model/types.ts';
import { unknownOpCount, type DiffOptions } from './diff.ts';
import { planContract, planContractText, tenantContracts, withDesiredChanges, type PlanContractText, type TenantContract } from './plan-contract.ts';
import type { DesiredChanges, PlanContract, PlanDocument, PlanTenant } from './types.ts';

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
   * it is declared, its desired fields), and its plan (ops and changes) is not made; not one the
   * change touched, which comes planned (its text shows what the change did to its desired fields).
   * `touched`: as its plan would say (only in a plan made with a base).
   */
  unknown?(contract: TenantContract, touched: boolean | undefined): void;
  /**
   * Optional, for a sink that writes only the text plan: a contract with known state (or touched by
   * the change) comes here instead of `contract`, its plan made without the known state's
   * fingerprint (not hashed).
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
  /** Only with a base: contracts marked `touched`. */
  readonly touched: number;
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

/** With a base: the tenant's contracts the change touched, and what it did to their desired fields. */
export interface TenantMarking {
  readonly ids: ReadonlySet<string>;
  readonly desiredChanges?: DesiredChanges;
}

/**
 * Plans `tenant`'s contracts (`sets`, its desired state as the scope stage left it) against its
 * known contracts, handing each to `out` in plan order as `out` takes it, and says what they add up
 * to (without calling `out.end`). `diffOptions` must have been checked (checkDiffOptions).
 */
export function planTenantContracts(
  tenant: string,
  sets: readonly ContractSet[],
  known: KnownContracts | undefined,
  marking: TenantMarking | undefined,
  out: TenantPlanSink,
  diffOptions: DiffOptions,
): TenantPlanCounts {
  const touchedIds = marking?.ids;
  /** Hands the contract on as the sink takes it, and says what its plan counts. */
  function handOn(contract: TenantContract): { readonly ops: number; readonly unknown: boolean; readonly touched: boolean } {
    out.desired?.(contract);
    // A touched one is planned: its plan carries what the change did to its desired fields, which its text shows.
    if (out.unknown !== undefined && known?.get(contract.id) === undefined && touchedIds?.has(contract.id) !== true) {
      // Counted as its plan would count: every op is a Replace of a scalar or an Add of a member.
      out.unknown(contract, touchedIds === undefined ? undefined : false);
      return { ops: unknownOpCount(contract.fields), unknown: true, touched: false };
    }
    let planned: PlanContractText;
    if (out.known === undefined) {
      const whole = withDesiredChanges(planContract(contract, known, touchedIds, diffOptions), tenant, marking?.desiredChanges);
      out.contract(whole);
      planned = whole;
    } else {
      planned = withDesiredChanges(planContractText(contract, known, touchedIds, diffOptions), tenant, marking?.desiredChanges);
      out.known(planned);
    }
    return { ops: planned.ops.length, unknown: planned.knownFrom === 'unknown', touched: planned.touched === true };
  }
  const counts = { contracts: 0, changed: 0, ops: 0, unknown: 0, touched: 0, shown: 0 };
  for (const contract of tenantContracts(sets)) {
    const counted = handOn(contract);
    counts.contracts += 1;
    if (counted.ops > 0) counts.changed += 1;
    counts.ops += counted.ops;
    if (counted.unknown) counts.unknown += 1;
    if (counted.touched) counts.touched += 1;
    // The text plan lists a contract with ops and, with a base, a touched one.
    if (counted.ops > 0 || counted.touched) counts.shown += 1;
  }
  return counts;
}
