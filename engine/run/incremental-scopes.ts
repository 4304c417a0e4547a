/** Incremental apply and plan, the adapter: each selected tenant's run record against the repository's history. */
import { planningFingerprints, startingPoint, tenantScope, type SinceCommit, type TenantScope } from '../apply/incremental.ts';
import type { Config } from '../config/types.ts';
import { desiredPathMatcher } from '../desired/read-files.ts';
import { changedFiles } from '../git/changed-files.ts';
import { checkAncestor } from '../git/is-ancestor.ts';
import type { GitRepository } from '../git/repository.ts';
import { resolveCommit } from '../git/resolve-ref.ts';
import { StateFormatError } from '../state/file-format.ts';
import type { StateStore } from '../state/types.ts';

export interface ScopeHead {
  /** The commit the desired state is read at, or HEAD for the working tree. */
  readonly commit: string;
  /** The desired state is the working tree: uncommitted and untracked files count as changed. */
  readonly workingTree: boolean;
  /**
   * A plan: compare with the last applied commit wherever it stands in the head's history (see
   * SinceCommit `compared`); an apply must descend from it.
   */
  readonly anyHistory?: boolean;
}

/**
 * Each tenant's scope. Tenants that applied the same commit (the usual case) share one `git diff`.
 */
export async function readTenantScopes(
  repository: GitRepository,
  store: StateStore,
  config: Config,
  tenants: readonly string[],
  head: ScopeHead,
): Promise<Map<string, TenantScope>> {
  const selected = desiredPathMatcher(config.desired.paths);
  const sinceByCommit = new Map<string, Promise<SinceCommit>>();
  const planning = planningFingerprints(config);

  async function since(commit: string): Promise<SinceCommit> {
    if (head.anyHistory) {
      if ((await resolveCommit(repository, commit)) === undefined) return { kind: 'missing' };
      return { kind: 'compared', changedFiles: await changedDesiredFiles(commit) };
    }
    const relation = await checkAncestor(repository, commit, head.commit);
    if (relation === 'not-ancestor' && (await checkAncestor(repository, head.commit, commit)) === 'ancestor') return { kind: 'behind' };
    if (relation !== 'ancestor') return { kind: relation };
    return { kind: 'ancestor', changedFiles: await changedDesiredFiles(commit) };
  }

  async function changedDesiredFiles(commit: string): Promise<string[]> {
    const changed = await changedFiles(repository, commit, head.workingTree ? null : head.commit);
    return changed.map((file) => file.path).filter(selected);
  }

  const scopes = await Promise.all(
    tenants.map(async (tenant) => {
      let record;
      try {
        record = await store.readRun(tenant);
      } catch (error) {
        // The run itself reads the record again under the tenant's lock and reports it there.
        if (error instanceof StateFormatError) return { tenant, kind: 'full' as const, reason: 'its run record cannot be read' };
        throw error;
      }
      const start = startingPoint(tenant, record, planning(tenant));
      if (start.kind !== 'since') return start;
      let answer = sinceByCommit.get(start.commit);
      if (!answer) {
        answer = since(start.commit);
        sinceByCommit.set(start.commit, answer);
      }
      return tenantScope(tenant, record!, await answer);
    }),
  );
  return new Map(scopes.map((scope) => [scope.tenant, scope]));
}
