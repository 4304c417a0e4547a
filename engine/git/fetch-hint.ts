/** What to run when a CI clone lacks the history a comparison needs. Pure. */
import { shellQuote } from '../text/shell-quote.ts';

const CI_HINT = 'in GitHub Actions, check out with `fetch-depth: 0` (actions/checkout); in GitLab CI, set `GIT_DEPTH: 0`';

/**
 * A `git fetch` that creates `ref`. `origin/main` (a remote's branch) is fetched into
 * refs/remotes/origin/main, which a plain `git fetch origin main` does not always update; any
 * other ref is fetched by name from the first remote. In a shallow clone, fetching the base at a
 * depth is not enough: the head's own history is cut too, so the merge base would still be
 * missing. `--deepen` moves the head's boundary back as well as fetching the base.
 */
export function fetchCommand(ref: string, options: { shallow: boolean; remotes: readonly string[] }): string {
  const { remotes } = options;
  const depth = options.shallow ? ' --deepen=50' : '';
  const slash = ref.indexOf('/');
  const remote = slash > 0 ? ref.slice(0, slash) : '';
  if (remote !== '' && (remotes.includes(remote) || (remotes.length === 0 && remote === 'origin'))) {
    const branch = ref.slice(slash + 1);
    return `git fetch --no-tags${depth} ${shellQuote(remote)} ${shellQuote(`+refs/heads/${branch}:refs/remotes/${remote}/${branch}`)}`;
  }
  return `git fetch --no-tags${depth} ${shellQuote(remotes[0] ?? 'origin')} ${shellQuote(ref)}`;
}

export function missingRefMessage(flag: string, ref: string, options: { shallow: boolean; remotes: readonly string[] }): string {
  const why = options.shallow ? 'this clone is shallow and does not have it' : 'no such branch, tag or commit in this clone';
  return `cannot resolve ${flag} ${JSON.stringify(ref)}: ${why}. Fetch it first (${fetchCommand(ref, options)}), or ${CI_HINT}.`;
}

export function noMergeBaseMessage(base: string, head: string, options: { shallow: boolean; remotes: readonly string[] }): string {
  if (!options.shallow) return `${JSON.stringify(base)} and ${JSON.stringify(head)} have no common history: there is no merge base to compare with.`;
  const remote = options.remotes[0] ?? 'origin';
  return (
    `cannot find where ${JSON.stringify(head)} branched off ${JSON.stringify(base)}: this clone is too shallow to hold their merge base. ` +
    `Deepen it (git fetch --no-tags --deepen=200 ${shellQuote(remote)}), or ${CI_HINT}.`
  );
}
