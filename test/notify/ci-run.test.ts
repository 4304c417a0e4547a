/** ciRun: the CI run's link, from the variables GitHub Actions and GitLab CI set; nothing when they are not what those set. */
import { describe, expect, it } from 'vitest';
import { ciRun } from '../../engine/notify/index.ts';

const GITHUB = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'example/contracts', GITHUB_RUN_ID: '42' };

describe('ciRun', () => {
  it.each([
    ['GitHub Actions', GITHUB, { provider: 'github', url: 'https://github.com/example/contracts/actions/runs/42' }],
    [
      'a re-run on GitHub',
      { ...GITHUB, GITHUB_RUN_ATTEMPT: '2' },
      { provider: 'github', url: 'https://github.com/example/contracts/actions/runs/42/attempts/2' },
    ],
    [
      'a GitLab job',
      { CI_JOB_URL: 'https://gitlab.example.com/g/p/-/jobs/7', CI_PIPELINE_URL: 'https://gitlab.example.com/g/p/-/pipelines/3' },
      { provider: 'gitlab', url: 'https://gitlab.example.com/g/p/-/jobs/7' },
    ],
    [
      'a GitLab pipeline',
      { CI_PIPELINE_URL: 'https://gitlab.example.com/g/p/-/pipelines/3' },
      { provider: 'gitlab', url: 'https://gitlab.example.com/g/p/-/pipelines/3' },
    ],
    ['no CI', {}, undefined],
    ['a run id that is not a number', { ...GITHUB, GITHUB_RUN_ID: '42/../../x' }, undefined],
    ['a URL with credentials', { CI_JOB_URL: 'https://user:token@gitlab.example.com/g/p/-/jobs/7' }, undefined],
    ['a URL over http', { CI_JOB_URL: 'http://gitlab.example.com/g/p/-/jobs/7' }, undefined],
  ])('%s', (_, env, expected) => {
    expect(ciRun(env)).toEqual(expected);
  });
});
