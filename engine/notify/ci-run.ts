/**
 * The link to the CI run that sends a notification, from the variables GitHub Actions
 * (GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT) and GitLab CI
 * (CI_JOB_URL, CI_PIPELINE_URL) set. Pure: the environment is passed in. A value that is not what
 * those set (a URL with credentials, a query) gives no link rather than a wrong one.
 */
import type { CiRun } from './types.ts';

type Env = Readonly<Record<string, string | undefined>>;

const REPOSITORY = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const NUMBER = /^[1-9]\d{0,19}$/;

/** An https URL (http only for loopback) without credentials, query or fragment; undefined otherwise. */
function plainUrl(text: string | undefined): string | undefined {
  if (!text || !URL.canParse(text)) return undefined;
  const url = new URL(text);
  const loopback = url.protocol === 'http:' && /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname);
  if ((url.protocol !== 'https:' && !loopback) || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  return url.href.replace(/\/+$/, '');
}

export function ciRun(env: Env): CiRun | undefined {
  const server = plainUrl(env.GITHUB_SERVER_URL);
  const repository = env.GITHUB_REPOSITORY;
  const runId = env.GITHUB_RUN_ID;
  if (server !== undefined && repository !== undefined && REPOSITORY.test(repository) && runId !== undefined && NUMBER.test(runId)) {
    const attempt =
      env.GITHUB_RUN_ATTEMPT !== undefined && NUMBER.test(env.GITHUB_RUN_ATTEMPT) && env.GITHUB_RUN_ATTEMPT !== '1'
        ? `/attempts/${env.GITHUB_RUN_ATTEMPT}`
        : '';
    return { provider: 'github', url: `${server}/${repository}/actions/runs/${runId}${attempt}` };
  }
  const gitlab = plainUrl(env.CI_JOB_URL) ?? plainUrl(env.CI_PIPELINE_URL);
  return gitlab === undefined ? undefined : { provider: 'gitlab', url: gitlab };
}
