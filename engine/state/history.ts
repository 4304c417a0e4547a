/**
 * Run history: one entry per finished `apply` or `drift --fix` run, kept by the state store
 * (docs/architecture.md section 7), read by `contract-sync state history`. Pure.
 */
import type { PolicySummary } from '../plan/types.ts';

export type HistoryCommand = 'apply' | 'drift --fix';

export interface HistoryQuery {
  readonly tenant?: string;
  /** At most this many entries (the newest). */
  readonly limit?: number;
}

/**
 * Who or what started a run, from the CI variables when there are any. Only what identifies the
 * run: no host names, tokens or other variables.
 */
export interface StartedBy {
  readonly ci?: 'github' | 'gitlab';
  readonly actor?: string;
  readonly workflow?: string;
  readonly ciRunId?: string;
  /** The CI run (GitHub) or pipeline (GitLab) page. */
  readonly url?: string;
  readonly jobUrl?: string;
}

export interface HistoryTenant {
  readonly tenant: string;
  readonly changed: number;
  readonly applied: number;
  readonly failed: number;
  readonly error?: string;
  /**
   * Of `failed`, the contracts whose patch may or may not have landed (its answer lost, or a worker
   * stopped with it in flight, and no read settled it): not counted as applied; the next run
   * settles them. Absent when none.
   */
  readonly unknown?: number;
  /** Shared runs (`--shard auto`): the worker that did the tenant. */
  readonly worker?: string;
  /**
   * Shared runs: the workers that took the tenant before `worker` and did not finish it (killed, or
   * their claim's session ended). What they applied is counted all the same. Absent when none.
   */
  readonly takenOverFrom?: readonly string[];
}

export interface RunHistoryEntry {
  readonly runId: string;
  readonly command: HistoryCommand;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly commit: string | null;
  readonly startedBy: StartedBy;
  readonly tenants: readonly HistoryTenant[];
  /** Policy findings the run lifted (`--override-policy`): the rule, the contract, the reason and who lifted it. Absent when none. */
  readonly overrides?: readonly HistoryOverride[];
  /** What the run's checks found (policy rules), counted as the plan's summary counts them. Absent when nothing. */
  readonly policy?: HistoryPolicy;
}

/** The plan document's summary.policy (engine/plan/policy-findings.ts), as the history keeps it. */
export type HistoryPolicy = PolicySummary;

export interface HistoryOverride {
  readonly policy: string;
  readonly tenant: string;
  readonly contractId?: string;
  readonly reason: string;
  readonly by: string;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function definedOnly(value: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Who started the run, from the CI variables of GitHub Actions or GitLab CI; `{}` elsewhere. */
export function startedByFromEnv(env: Readonly<Record<string, string | undefined>>): StartedBy {
  if (env.GITHUB_ACTIONS === 'true' || nonEmpty(env.GITHUB_RUN_ID) !== undefined) {
    const server = nonEmpty(env.GITHUB_SERVER_URL);
    const repository = nonEmpty(env.GITHUB_REPOSITORY);
    const runId = nonEmpty(env.GITHUB_RUN_ID);
    const url = server && repository && runId ? `${server.replace(/\/+$/, '')}/${repository}/actions/runs/${runId}` : undefined;
    return { ci: 'github', ...definedOnly({ actor: nonEmpty(env.GITHUB_ACTOR), workflow: nonEmpty(env.GITHUB_WORKFLOW), ciRunId: runId, url }) };
  }
  if (env.GITLAB_CI === 'true' || nonEmpty(env.CI_PIPELINE_URL) !== undefined) {
    return {
      ci: 'gitlab',
      ...definedOnly({
        actor: nonEmpty(env.GITLAB_USER_LOGIN),
        ciRunId: nonEmpty(env.CI_PIPELINE_ID),
        url: nonEmpty(env.CI_PIPELINE_URL),
        jobUrl: nonEmpty(env.CI_JOB_URL),
      }),
    };
  }
  return {};
}

/** A bad entry is a programming error: TypeError. */
export function checkHistoryEntry(entry: RunHistoryEntry): void {
  const { runId, command, startedAt, finishedAt, commit, startedBy, tenants } = entry;
  if (typeof runId !== 'string' || !/^[A-Za-z0-9._:-]{1,200}$/.test(runId))
    throw new TypeError(`history entry: "runId" must be a simple id, got ${JSON.stringify(runId)}`);
  if (command !== 'apply' && command !== 'drift --fix')
    throw new TypeError(`history entry ${runId}: "command" must be "apply" or "drift --fix", got ${JSON.stringify(command)}`);
  if (typeof startedAt !== 'string' || typeof finishedAt !== 'string')
    throw new TypeError(`history entry ${runId}: "startedAt" and "finishedAt" must be strings`);
  if (commit !== null && typeof commit !== 'string') throw new TypeError(`history entry ${runId}: "commit" must be a string or null`);
  if (startedBy === null || typeof startedBy !== 'object') throw new TypeError(`history entry ${runId}: "startedBy" must be an object`);
  if (!Array.isArray(tenants)) throw new TypeError(`history entry ${runId}: "tenants" must be an array`);
}

export function checkHistoryQuery(query: HistoryQuery): void {
  const { limit } = query;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new TypeError(`query.limit: expected an integer >= 1, got ${String(limit)}`);
}

/** `entries` newest first, filtered and cut as `query` asks: what every backend's readHistory returns. */
export function selectHistory(entries: readonly RunHistoryEntry[], query: HistoryQuery = {}): RunHistoryEntry[] {
  const selected = entries
    .filter((entry) => query.tenant === undefined || entry.tenants.some((tenant) => tenant.tenant === query.tenant))
    .sort((a, b) => (a.finishedAt < b.finishedAt ? 1 : a.finishedAt > b.finishedAt ? -1 : a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0));
  return query.limit === undefined ? selected : selected.slice(0, query.limit);
}
