/**
 * Incremental apply and plan, the pure part: what a tenant's run must look at when it already
 * applied an earlier commit. A run since commit L reads only the desired-state files that changed
 * since L, plus the files of the contracts L's run did not finish, and plans only the contracts of
 * them whose desired fields differ from what L declared, plus those unfinished ones. Everything
 * else is, by the state store's own record, already applied as git says; the `drift` command is
 * what looks at the service itself.
 */
import type { Config } from '../config/types.ts';
import type { ContractSet } from '../desired/types.ts';
import type { ContractFields } from '../model/types.ts';
import { contractKey, sameDesiredFields } from '../plan/touched-contracts.ts';
import { fingerprint } from '../model/fingerprint.ts';
import { plural } from '../text/plural.ts';
import type { TenantRunRecord } from '../state/types.ts';

/**
 * The settings that change a tenant's plan without changing a desired-state file: which files are
 * read, which of them may name the tenant, how collections are compared. A run records it; a later
 * run with another value plans every contract again.
 */
export function planningFingerprint(config: Pick<Config, 'desired' | 'tenants' | 'collections'>, tenant: string): string {
  return fingerprint({
    desired: config.desired.paths,
    tenantPaths: config.tenants[tenant]?.paths ?? null,
    collections: config.collections,
  });
}

/**
 * planningFingerprint of each tenant of one config. Tenants with the same `paths` (most have none)
 * share one hash: a plan of 100 tenants hashed the same settings 100 times.
 */
export function planningFingerprints(config: Pick<Config, 'desired' | 'tenants' | 'collections'>): (tenant: string) => string {
  const byPaths = new Map<readonly string[] | undefined, string>();
  return (tenant) => {
    const paths = config.tenants[tenant]?.paths;
    let value = byPaths.get(paths);
    if (value === undefined) {
      value = planningFingerprint(config, tenant);
      byPaths.set(paths, value);
    }
    return value;
  };
}

/**
 * What one tenant's run plans: everything, the contracts of some files, or nothing: `behind`, when
 * the tenant was last applied at a commit that descends from this one. Applying an older commit
 * over a newer one is what an old pipeline run re-run by hand does; going back is a revert commit
 * (or `apply --full`, which does not look at the run record).
 */
export type TenantScope =
  | { readonly tenant: string; readonly kind: 'full'; readonly reason: string }
  | { readonly tenant: string; readonly kind: 'behind'; readonly since: string }
  | {
      readonly kind: 'incremental';
      readonly tenant: string;
      /** The tenant's last applied commit. */
      readonly since: string;
      /** Desired-state files to plan: `changed` plus those of pending contracts. */
      readonly files: ReadonlySet<string>;
      /** Contracts the last run did not finish. */
      readonly pending: number;
      /** Their ContractIds: planned whether or not their desired fields changed. */
      readonly pendingIds: ReadonlySet<string>;
    };

/** What the git adapter found out about a tenant's last applied commit, relative to the head. */
export type SinceCommit =
  | { readonly kind: 'missing' }
  | { readonly kind: 'not-ancestor' }
  /** The head is in the history of the last applied commit: this run's desired state is older. */
  | { readonly kind: 'behind' }
  | { readonly kind: 'ancestor'; readonly changedFiles: readonly string[] }
  /**
   * A plan's answer: the commit is in the clone, wherever it stands in the head's history. A plan
   * may start from any commit whose state the store holds (a pull request branched off before the
   * last apply): the files that differ between the two are all that can plan differently.
   */
  | { readonly kind: 'compared'; readonly changedFiles: readonly string[] };

/**
 * The first question: can the run record be trusted as a starting point at all? Returns a full
 * scope when it cannot, otherwise the commit to compare with.
 */
export function startingPoint(
  tenant: string,
  record: TenantRunRecord | undefined,
  planning: string,
): TenantScope | { readonly kind: 'since'; readonly commit: string } {
  if (record === undefined || record.lastAppliedCommit === null) return { tenant, kind: 'full', reason: 'no earlier run recorded a commit' };
  if (record.planningFingerprint !== planning) {
    return {
      tenant,
      kind: 'full',
      reason: 'the config changed how contracts are planned (desired paths, tenant paths or collection modes) since the last run',
    };
  }
  if (record.pending.some((entry) => entry.file === undefined))
    return { tenant, kind: 'full', reason: 'a contract left pending by an earlier run has no recorded file' };
  return { kind: 'since', commit: record.lastAppliedCommit };
}

/** The tenant's scope, once git has answered about its last applied commit. */
export function tenantScope(tenant: string, record: TenantRunRecord, since: SinceCommit): TenantScope {
  const commit = record.lastAppliedCommit!;
  const short = commit.slice(0, 12);
  if (since.kind === 'missing') {
    return {
      tenant,
      kind: 'full',
      reason: `the last applied commit ${short} is not in this clone (fetch the history, e.g. actions/checkout with fetch-depth: 0, for incremental runs)`,
    };
  }
  if (since.kind === 'behind') return { tenant, kind: 'behind', since: commit };
  if (since.kind === 'not-ancestor')
    return { tenant, kind: 'full', reason: `the last applied commit ${short} is not an ancestor of this one (history rewritten, or an older commit)` };
  const files = new Set(since.changedFiles);
  for (const entry of record.pending) files.add(entry.file!);
  return {
    tenant,
    kind: 'incremental',
    since: commit,
    files,
    pending: record.pending.length,
    pendingIds: new Set(record.pending.map((entry) => entry.contractId)),
  };
}

/**
 * The contract sets a tenant plans: an incremental one those of its scope's files (and of
 * `alsoFiles`, a pull request's changed files, for its marks), a full one every set, one behind none.
 */
export function narrowToScopes(
  contractSets: readonly ContractSet[],
  scopes: ReadonlyMap<string, TenantScope>,
  alsoFiles: ReadonlySet<string> = new Set(),
): ContractSet[] {
  return contractSets.filter((set) => {
    const scope = scopes.get(set.tenant);
    if (scope?.kind === 'behind') return false;
    return scope?.kind !== 'incremental' || scope.files.has(set.file) || alsoFiles.has(set.file);
  });
}

/**
 * Within an incremental tenant's files, the contracts worth planning: those whose desired fields
 * differ from what the files declared at the tenant's last applied commit (added ones included),
 * the ones an earlier run did not finish, and `also` (a pull request's touched contracts). An
 * unchanged contract of a changed file plans exactly as it did at that commit: from the state
 * store, to nothing; with reads, to a read the run has no use for.
 * `before`: by commit, the contract sets its changed files declared then (files that did not
 * parse then declare none, so every contract of theirs is planned).
 */
export function narrowToChangedContracts(
  contractSets: readonly ContractSet[],
  scopes: ReadonlyMap<string, TenantScope>,
  before: ReadonlyMap<string, readonly ContractSet[]>,
  also: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): ContractSet[] {
  const declared = new Map<string, Map<string, ContractFields>>();
  for (const [commit, sets] of before) {
    const byKey = new Map<string, ContractFields>();
    for (const set of sets) for (const contract of set.contracts) byKey.set(contractKey(set.tenant, contract.id), contract.fields);
    declared.set(commit, byKey);
  }
  const narrowed: ContractSet[] = [];
  for (const set of contractSets) {
    const scope = scopes.get(set.tenant);
    if (scope?.kind !== 'incremental') {
      narrowed.push(set);
      continue;
    }
    const then = declared.get(scope.since);
    const extra = also.get(set.tenant);
    // A file outside the scope is the same as at the last applied commit.
    const changed = scope.files.has(set.file);
    const contracts = set.contracts.filter((contract) => {
      if (scope.pendingIds.has(contract.id) || extra?.has(contract.id)) return true;
      if (!changed) return false;
      const fields = then?.get(contractKey(set.tenant, contract.id));
      return fields === undefined || !sameDesiredFields(fields, contract.fields);
    });
    if (contracts.length > 0) narrowed.push(contracts.length === set.contracts.length ? set : { ...set, contracts });
  }
  return narrowed;
}

/** Per incremental tenant, the files its run reads (for runApply's `filesRead`). */
export function filesReadByTenant(scopes: ReadonlyMap<string, TenantScope>): Map<string, ReadonlySet<string>> {
  const files = new Map<string, ReadonlySet<string>>();
  for (const scope of scopes.values()) if (scope.kind === 'incremental') files.set(scope.tenant, scope.files);
  return files;
}

/** One line per tenant for the run's output: what was planned and why. `contracts`: how many of the tenant's were planned. */
export function describeScope(scope: TenantScope, contracts: number): string {
  if (scope.kind === 'full') return `${scope.tenant}: every contract planned (${scope.reason})`;
  if (scope.kind === 'behind') {
    return `${scope.tenant}: not applied: it was last applied at ${scope.since.slice(0, 12)}, which is newer than this commit (an older pipeline run?); to go back, commit a revert, or pass --full to apply this commit anyway`;
  }
  const since = `${scope.tenant}: incremental since ${scope.since.slice(0, 12)}`;
  if (scope.pending === 0) return contracts === 0 ? `${since}: no contract changed in git` : `${since}: ${plural(contracts, 'contract')} changed in git`;
  const unfinished = `${plural(scope.pending, 'contract')} an earlier run did not finish`;
  if (contracts === 0) return `${since}: no contract changed in git (and none of the ${unfinished} is still declared)`;
  return `${since}: ${plural(contracts, 'contract')} changed in git or left unfinished (${unfinished})`;
}
