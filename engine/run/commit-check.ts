import { checkAncestor } from '../git/is-ancestor.ts';
import { changedFiles } from '../git/changed-files.ts';
import type { GitRepository } from '../git/repository.ts';
import type { TenantScope } from '../apply/incremental.ts';
import { desiredPathMatcher } from '../desired/read-files.ts';
import type { TenantRunRecord } from '../state/types.ts';

/**
 * What must hold for a tenant under its lock, with its run record read there: the record this run
 * planned from is still the tenant's. Another run may have applied while this one waited for the
 * lock. A newer commit (this one is in its history) is never sent over: the tenant is refused.
 * An older or equal commit leaves this run's plan right only when every file changed since that
 * commit is in this run's scope; otherwise the tenant is refused, to be planned again.
 */
export function commitCheck(
  repository: GitRepository,
  head: string,
  scopes: ReadonlyMap<string, TenantScope>,
  desiredPaths: readonly string[],
): (tenant: string, record: TenantRunRecord | undefined) => Promise<string | undefined> {
  const selected = desiredPathMatcher(desiredPaths);
  return async (tenant, record) => {
    const scope = scopes.get(tenant);
    const recorded = record?.lastAppliedCommit ?? null;
    if (scope === undefined || recorded === null || recorded === head) return undefined;
    if (scope.kind === 'incremental' && recorded === scope.since) return undefined;
    const waited = `while this run waited for the lock, another run recorded ${recorded.slice(0, 12)} as tenant ${tenant}'s last applied commit`;
    if ((await checkAncestor(repository, head, recorded)) === 'ancestor') {
      return `not applied: ${waited}, which is newer than this commit ${head.slice(0, 12)}; nothing sent (to go back, commit a revert, or pass --full to apply this commit anyway)`;
    }
    // A full plan reads every contract's record under the lock: whatever was applied, it plans from it.
    if (scope.kind === 'full') return undefined;
    if (scope.kind === 'incremental' && (await checkAncestor(repository, recorded, head)) === 'ancestor') {
      const changed = (await changedFiles(repository, recorded, head)).map((file) => file.path).filter(selected);
      if (changed.every((file) => scope.files.has(file))) return undefined;
    }
    return `not applied: ${waited}, which this run did not plan from; nothing sent; run apply again`;
  };
}
