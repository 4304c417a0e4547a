/** Run history entries: who started a run (from CI variables), and what an entry keeps of a run report. */
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../engine/apply/run-report.ts';
import { historyEntryOf } from '../../engine/run/record-history.ts';
import { selectHistory, startedByFromEnv, type RunHistoryEntry } from '../../engine/state/history.ts';
import { renderHistoryText } from '../../engine/state/inspect.ts';

describe('startedByFromEnv', () => {
  it.each([
    {
      name: 'GitHub Actions, with the run URL',
      env: {
        GITHUB_ACTIONS: 'true',
        GITHUB_ACTOR: 'octocat',
        GITHUB_WORKFLOW: 'contracts',
        GITHUB_RUN_ID: '42',
        GITHUB_SERVER_URL: 'https://github.com/',
        GITHUB_REPOSITORY: 'acme/contracts',
        GITHUB_TOKEN: 'throwaway-token',
        RUNNER_NAME: 'runner-7',
      },
      expected: { ci: 'github', actor: 'octocat', workflow: 'contracts', ciRunId: '42', url: 'https://github.com/acme/contracts/actions/runs/42' },
    },
    {
      name: 'GitHub Actions without the server URL: no run URL',
      env: { GITHUB_ACTIONS: 'true', GITHUB_ACTOR: 'octocat', GITHUB_RUN_ID: '42', GITHUB_REPOSITORY: 'acme/contracts' },
      expected: { ci: 'github', actor: 'octocat', ciRunId: '42' },
    },
    {
      name: 'GitLab CI',
      env: {
        GITLAB_CI: 'true',
        GITLAB_USER_LOGIN: 'jane',
        CI_PIPELINE_ID: '991',
        CI_PIPELINE_URL: 'https://gitlab.example.com/acme/contracts/-/pipelines/991',
        CI_JOB_URL: 'https://gitlab.example.com/acme/contracts/-/jobs/5',
        CI_JOB_TOKEN: 'throwaway-token',
      },
      expected: {
        ci: 'gitlab',
        actor: 'jane',
        ciRunId: '991',
        url: 'https://gitlab.example.com/acme/contracts/-/pipelines/991',
        jobUrl: 'https://gitlab.example.com/acme/contracts/-/jobs/5',
      },
    },
    { name: 'GitLab CI with empty variables', env: { GITLAB_CI: 'true', GITLAB_USER_LOGIN: '' }, expected: { ci: 'gitlab' } },
    { name: 'no CI: nothing (no user or host names)', env: { USER: 'jane', HOSTNAME: 'laptop', HOME: '/home/jane' }, expected: {} },
  ])('$name', ({ env, expected }) => {
    const startedBy = startedByFromEnv(env);

    expect(startedBy).toStrictEqual(expected);
    expect(JSON.stringify(startedBy)).not.toContain('throwaway-token');
  });
});

const REPORT = {
  version: 1,
  runId: 'run-1',
  startedAt: '2027-01-01T00:00:00.000Z',
  finishedAt: '2027-01-01T00:01:00.000Z',
  dryRun: false,
  source: { repo: '.', ref: null, commit: 'a'.repeat(40) },
  tenants: [
    {
      tenant: 'acme',
      contracts: 5,
      changed: 3,
      applied: 2,
      ops: 4,
      requests: 3,
      retries: 0,
      throttles: 0,
      failures: [{ contractId: '4711', file: 'a.yaml', line: 3, outcome: 'failed', ops: 1, status: 400, reason: 'bad' }],
    },
    { tenant: 'globex', contracts: 2, changed: 1, applied: 0, ops: 1, requests: 0, retries: 0, throttles: 0, failures: [], error: 'token refused' },
  ],
  summary: { tenants: 2, changed: 4, applied: 2, failed: 1, ops: 5, requests: 3, retries: 0 },
} as unknown as RunReport;

it('keeps of a run report its id, times, commit and per-tenant counts and error', () => {
  const entry = historyEntryOf(REPORT, 'drift --fix', { ci: 'github', actor: 'octocat' });

  expect(entry).toStrictEqual({
    runId: 'run-1',
    command: 'drift --fix',
    startedAt: '2027-01-01T00:00:00.000Z',
    finishedAt: '2027-01-01T00:01:00.000Z',
    commit: 'a'.repeat(40),
    startedBy: { ci: 'github', actor: 'octocat' },
    tenants: [
      { tenant: 'acme', changed: 3, applied: 2, failed: 1 },
      { tenant: 'globex', changed: 1, applied: 0, failed: 0, error: 'token refused' },
    ],
  });
});

it('selects history newest first, ties by run id', () => {
  const base = historyEntryOf(REPORT, 'apply', {});
  const entries = [
    { ...base, runId: 'b', finishedAt: '2027-01-01T00:00:00.000Z' },
    { ...base, runId: 'c', finishedAt: '2027-01-02T00:00:00.000Z' },
    { ...base, runId: 'a', finishedAt: '2027-01-01T00:00:00.000Z' },
  ];

  expect(selectHistory(entries).map((entry) => entry.runId)).toEqual(['c', 'b', 'a']);
});

describe('renderHistoryText', () => {
  it("says a shared run's tenant taken over from workers that stopped, and the contracts left unknown (not counted as applied)", () => {
    const entry: RunHistoryEntry = {
      runId: 'run-1',
      command: 'apply',
      startedAt: '2027-01-01T00:00:00.000Z',
      finishedAt: '2027-01-01T00:01:00.000Z',
      commit: 'c'.repeat(40),
      startedBy: {},
      tenants: [
        { tenant: 'acme', changed: 16, applied: 14, failed: 2, unknown: 2, worker: 'w2', takenOverFrom: ['w1', 'w3'] },
        { tenant: 'globex', changed: 16, applied: 16, failed: 0, worker: 'w2' },
      ],
    };

    const text = renderHistoryText([entry]);

    expect(text).toBe(
      '2027-01-01T00:01:00.000Z  apply  run run-1  commit cccccccccccc\n' +
        '  acme: 16 changed, 14 applied, 2 failed (2 unknown: may have been applied, not counted; the next run settles them) (worker w2, taken over from workers w1, w3)\n' +
        '  globex: 16 changed, 16 applied, 0 failed (worker w2)\n',
    );
  });

  it('escapes what came from CI variables, worker names and the service', () => {
    const entry: RunHistoryEntry = {
      runId: 'run-2',
      command: 'apply',
      startedAt: '2027-01-01T00:00:00.000Z',
      finishedAt: '2027-01-01T00:01:00.000Z',
      commit: null,
      startedBy: { actor: 'octo\u001b[2Jcat' },
      tenants: [{ tenant: 'acme', changed: 1, applied: 0, failed: 1, error: 'refused \u202eevil', worker: 'w\u009b1', takenOverFrom: ['v\r1'] }],
    };

    expect(renderHistoryText([entry])).toBe(
      '2027-01-01T00:01:00.000Z  apply  run run-2  commit none  by octo\\e[2Jcat\n' +
        '  acme: 1 changed, 0 applied, 1 failed (worker w\\u009b1, taken over from worker v\\r1); refused \\u202eevil\n',
    );
  });
});
