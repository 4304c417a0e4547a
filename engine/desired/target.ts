/**
 * Targeting (`--target TENANT/ID`, `--exclude TENANT/ID`), like Terraform's `-target` / `-exclude`:
 * a run plans, reads and sends only the contracts selected. Pure: contract sets and patterns in,
 * narrowed contract sets and a description out.
 *
 * - A target names one contract exactly: `acme/4711`. Each must match a declared contract of the
 *   contract sets given; one that matches none is reported (the caller refuses the run).
 * - An exclude may use a glob on the id (`acme/47*`, picomatch syntax); the tenant is exact. It
 *   applies after the targets. An exclude that matches nothing is reported, not refused.
 * - A tenant some of whose contracts were left out is "narrowed": its run record must not claim
 *   that the run applied its whole desired state at the run's commit.
 */
import picomatch from 'picomatch';
import type { ContractSet } from './types.ts';

export interface TargetPattern {
  readonly tenant: string;
  /** The id, or for an exclude a glob on the id. */
  readonly id: string;
  /** As given on the command line, for messages. */
  readonly raw: string;
}

export interface TargetOptions {
  readonly targets: readonly TargetPattern[];
  readonly excludes: readonly TargetPattern[];
}

export type TargetSelection =
  | {
      readonly kind: 'selected';
      readonly contractSets: readonly ContractSet[];
      /** Tenants whose contracts were not all kept (a tenant left out entirely is not listed). */
      readonly narrowed: ReadonlySet<string>;
      readonly total: number;
      readonly selected: number;
      /** Excludes that matched no contract, as given. */
      readonly unmatchedExcludes: readonly string[];
      /** E.g. `Targeted run: 2 of 180 contracts (--target acme/4711 --target acme/4712)`. */
      readonly description: string;
    }
  | { readonly kind: 'unmatched'; readonly unmatched: readonly string[] };

/**
 * `TENANT/ID` -> a pattern, or the problem with the value (for a usage error naming the flag).
 * The tenant is everything before the first `/`; a ContractId may itself hold a `/`.
 */
export function parseTargetPattern(value: string): TargetPattern | string {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return `expected TENANT/ID (e.g. acme/4711), got "${value}"`;
  return { tenant: value.slice(0, slash), id: value.slice(slash + 1), raw: value };
}

function plural(n: number, word: string): string {
  return `${n} ${n === 1 ? word : `${word}s`}`;
}

/** Is there anything to select? No targets and no excludes: the run is not targeted. */
export function isTargeted(options: TargetOptions): boolean {
  return options.targets.length > 0 || options.excludes.length > 0;
}

/**
 * Narrows `contractSets` to the targets (all contracts when there is none) minus the excludes.
 * Sets left with no contract are dropped; the order of sets and of contracts is kept.
 */
export function selectTargets(contractSets: readonly ContractSet[], options: TargetOptions): TargetSelection {
  const declared = new Set(contractSets.flatMap((set) => set.contracts.map((contract) => `${set.tenant}\u0000${contract.id}`)));
  const unmatched = options.targets.filter((target) => !declared.has(`${target.tenant}\u0000${target.id}`)).map((target) => target.raw);
  if (unmatched.length > 0) return { kind: 'unmatched', unmatched };

  const targeted = new Set(options.targets.map((target) => `${target.tenant}\u0000${target.id}`));
  const excludes = options.excludes.map((exclude) => ({ exclude, matches: picomatch(exclude.id, { dot: true }), used: false }));
  function kept(tenant: string, id: string): boolean {
    if (targeted.size > 0 && !targeted.has(`${tenant}\u0000${id}`)) return false;
    let keep = true;
    for (const entry of excludes) {
      if (entry.exclude.tenant === tenant && entry.matches(id)) {
        entry.used = true;
        keep = false;
      }
    }
    return keep;
  }

  let total = 0;
  let selected = 0;
  const narrowed = new Set<string>();
  const keptTenants = new Set<string>();
  const sets: ContractSet[] = [];
  for (const set of contractSets) {
    const contracts = set.contracts.filter((contract) => kept(set.tenant, contract.id));
    total += set.contracts.length;
    selected += contracts.length;
    if (contracts.length < set.contracts.length) narrowed.add(set.tenant);
    if (contracts.length > 0) keptTenants.add(set.tenant);
    if (contracts.length > 0) sets.push(contracts.length === set.contracts.length ? set : { ...set, contracts });
  }
  return {
    kind: 'selected',
    contractSets: sets,
    narrowed: new Set([...narrowed].filter((tenant) => keptTenants.has(tenant))),
    total,
    selected,
    unmatchedExcludes: excludes.filter((entry) => !entry.used).map((entry) => entry.exclude.raw),
    description: describeTargeting(selected, total, options),
  };
}

/** `Targeted run: 2 of 180 contracts (--target acme/4711 --target acme/4712).` */
export function describeTargeting(selected: number, total: number, options: TargetOptions): string {
  const flags = [...options.targets.map((target) => `--target ${target.raw}`), ...options.excludes.map((exclude) => `--exclude ${exclude.raw}`)].join(' ');
  return `Targeted run: ${selected} of ${plural(total, 'contract')} (${flags}).`;
}

/**
 * A saved plan's selection: `contractSets` narrowed to the contracts the plan lists, per tenant.
 * A plan made with `--target` lists only its targets; applying it is a targeted run too.
 */
export function restrictToContracts(
  contractSets: readonly ContractSet[],
  listed: ReadonlyMap<string, ReadonlySet<string>>,
): { readonly contractSets: readonly ContractSet[]; readonly narrowed: ReadonlySet<string> } {
  const narrowed = new Set<string>();
  const sets: ContractSet[] = [];
  for (const set of contractSets) {
    const ids = listed.get(set.tenant);
    const contracts = ids === undefined ? [] : set.contracts.filter((contract) => ids.has(contract.id));
    if (contracts.length < set.contracts.length) narrowed.add(set.tenant);
    if (contracts.length > 0) sets.push(contracts.length === set.contracts.length ? set : { ...set, contracts });
  }
  return { contractSets: sets, narrowed: new Set([...narrowed].filter((tenant) => listed.has(tenant))) };
}
