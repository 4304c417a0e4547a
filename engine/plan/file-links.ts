/**
 * Links from a plan to its files at a commit, when the CI variables say where the repository lives
 * on the web: GitHub Actions (GITHUB_SERVER_URL, GITHUB_REPOSITORY) and GitLab CI
 * (CI_PROJECT_URL, or CI_SERVER_URL and CI_PROJECT_PATH). Pure: the environment is passed in.
 */

export type LinkHost = 'github' | 'gitlab';

export interface RepositoryLinks {
  readonly host: LinkHost;
  /** The repository's web page, without a trailing slash: `https://github.com/acme/contracts`. */
  readonly web: string;
  /**
   * Where the plan's files are in the repository: `''` when the desired state is read from the
   * top of the work tree, else the directory with a trailing slash (`infra/contracts/`).
   */
  readonly prefix: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** `owner/name` on GitHub; `group/subgroup/project` on GitLab. */
const REPOSITORY_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** An http(s) URL without credentials, query or fragment, as text without a trailing slash; undefined otherwise. */
function webRoot(text: string | undefined): string | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  // A URL with user info could carry a token (GitLab's CI_REPOSITORY_URL does): never printed.
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return undefined;
  return url.href.replace(/\/+$/, '');
}

function joinRepository(server: string | undefined, repository: string | undefined): string | undefined {
  const root = webRoot(server);
  if (root === undefined || repository === undefined || !REPOSITORY_PATH.test(repository)) return undefined;
  return `${root}/${repository}`;
}

/** The directory of the plan's files in the repository, `/`-separated; refused when it leaves it. */
function normalisePrefix(prefix: string): string | undefined {
  const segments = prefix.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.some((segment) => segment === '..')) return undefined;
  return segments.map((segment) => `${segment}/`).join('');
}

/**
 * Where the repository of a CI job lives, from its environment; undefined outside GitHub Actions
 * and GitLab CI, or when a variable is not what those set. `prefix`: the plan's files' directory
 * in the repository (see RepositoryLinks).
 */
export function repositoryLinks(env: Env, prefix = ''): RepositoryLinks | undefined {
  const directory = normalisePrefix(prefix);
  if (directory === undefined) return undefined;
  const github = joinRepository(env.GITHUB_SERVER_URL, env.GITHUB_REPOSITORY);
  if (github !== undefined) return { host: 'github', web: github, prefix: directory };
  const gitlab = webRoot(env.CI_PROJECT_URL) ?? joinRepository(env.CI_SERVER_URL, env.CI_PROJECT_PATH);
  if (gitlab !== undefined) return { host: 'gitlab', web: gitlab, prefix: directory };
  return undefined;
}

/** A path segment for a URL inside a markdown link: parentheses would end the link's destination. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replaceAll('(', '%28').replaceAll(')', '%29');
}

/** The page of `commit`; undefined when `commit` is not a full commit id. */
export function commitUrl(links: RepositoryLinks, commit: string): string | undefined {
  if (!COMMIT.test(commit)) return undefined;
  return `${links.web}/${links.host === 'gitlab' ? '-/' : ''}commit/${commit}`;
}

/**
 * `file` at `commit`, scrolled to `line`; undefined when `commit` is not a full commit id or
 * `file` is not a relative path inside the repository.
 */
export function fileUrl(links: RepositoryLinks, commit: string, file: string, line: number): string | undefined {
  if (!COMMIT.test(commit) || !Number.isInteger(line) || line < 1) return undefined;
  const segments = `${links.prefix}${file}`.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return undefined;
  return `${links.web}/${links.host === 'gitlab' ? '-/' : ''}blob/${commit}/${segments.map(encodeSegment).join('/')}#L${line}`;
}

/** Where the whole plan is kept when the comment shows less of it: a workflow run's artifact. */
export interface FullPlanArtifact {
  /** The workflow run's page, where the artifact is listed: `https://github.com/acme/contracts/actions/runs/123`. */
  readonly url: string;
  /** The artifact's name there. */
  readonly name: string;
}

/** What the GitHub Action names its plan artifact: letters, digits, `.`, `_` and `-` only. */
const ARTIFACT_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The plan artifact of this workflow run, when the contract-sync GitHub Action uploads one: it
 * sets CONTRACT_SYNC_PLAN_ARTIFACT to the artifact's name for the plan it runs, and GitHub sets
 * the run's GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID. Undefined otherwise (a plan
 * run outside the Action has no artifact to link).
 */
export function planArtifact(env: Env): FullPlanArtifact | undefined {
  const name = env.CONTRACT_SYNC_PLAN_ARTIFACT;
  const runId = env.GITHUB_RUN_ID;
  if (name === undefined || !ARTIFACT_NAME.test(name) || runId === undefined || !/^\d{1,20}$/.test(runId)) return undefined;
  const repository = joinRepository(env.GITHUB_SERVER_URL, env.GITHUB_REPOSITORY);
  if (repository === undefined) return undefined;
  return { url: `${repository}/actions/runs/${runId}`, name };
}
