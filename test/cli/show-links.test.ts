/**
 * The markdown plan in a CI job: files link to the head commit when the CI variables say where
 * the repository lives, from plan and from show PLAN.json alike; the plan file records what the
 * comment's header and notes need.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../engine/run/version.ts';
import { parsePlan } from '../../engine/index.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';
import { pullRequestRepo } from '../helpers/pull-request-repo.ts';
import type { TestRepo } from '../git/helpers.ts';

const CONTRACTS = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
`;

const GITHUB = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts' };
const GITLAB = { CI_SERVER_URL: 'https://gitlab.example.com', CI_PROJECT_PATH: 'legal/contracts' };

/** A repository whose desired state is in `dir` ('' the top), with a second commit changing 4711 on branch renew. */
async function pullRequest(dir: string, config = configYaml(['acme'])): Promise<{ repo: TestRepo; head: string }> {
  function at(file: string): string {
    return dir === '' ? file : `${dir}/${file}`;
  }
  return pullRequestRepo({
    base: { [at('contract-sync.yaml')]: config, [at('contracts/acme/a.yaml')]: CONTRACTS },
    branch: 'renew',
    message: 'Renew 4711',
    changes: { [at('contracts/acme/a.yaml')]: CONTRACTS.replace('cleaning', 'cleaning 2028') },
  });
}

describe('the markdown plan in CI', () => {
  it.each([
    ['GitHub', GITHUB, 'https://github.com/acme/contracts/blob'],
    ['GitLab', GITLAB, 'https://gitlab.example.com/legal/contracts/-/blob'],
  ])('%s: files link to the head commit, in plan and in show PLAN.json', async (_name, env, blob) => {
    const { repo, head } = await pullRequest('');

    const planned = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json', '--format', 'markdown'], repo.dir, env);
    const shown = await runCli(['show', 'plan.json', '--format', 'markdown'], repo.dir, env);

    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain(`**\`4711\`** · acme · [contracts/acme/a.yaml:3](${blob}/${head}/contracts/acme/a.yaml#L3) · `);
    expect(shown).toEqual({ code: 0, stdout: planned.stdout, stderr: '' });
  });

  it('a desired state in a directory of the repository (--repo): the links include the directory', async () => {
    const { repo, head } = await pullRequest('infra/contract-sync');

    const run = await runCli(['plan', '--repo', 'infra/contract-sync', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown'], repo.dir, GITHUB);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`[contracts/acme/a.yaml:3](https://github.com/acme/contracts/blob/${head}/infra/contract-sync/contracts/acme/a.yaml#L3)`);
  });

  it('no links without the CI variables, nor for a plan of the working tree', async () => {
    const { repo } = await pullRequest('');

    const outsideCi = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--format', 'markdown'], repo.dir);
    const workingTree = await runCli(['plan', '--base', 'main', '--format', 'markdown'], repo.dir, GITHUB);

    expect(outsideCi.code, outsideCi.stderr).toBe(0);
    expect(outsideCi.stdout).toContain('**`4711`** · acme · contracts/acme/a.yaml:3 · ');
    expect(outsideCi.stdout).not.toContain('](');
    expect(workingTree.code, workingTree.stderr).toBe(0);
    expect(workingTree.stdout).toContain('Working tree (uncommitted edits included) at `');
    expect(workingTree.stdout).not.toContain('](');
  });

  it('the plan file records the version, the reads and the collection modes; the comment says what apply may remove', async () => {
    const config = configYaml(['acme'], 'collections: { Company: additive }\n').replace(
      'api: { baseUrl: https://cms.example.com }',
      'api: { baseUrl: https://cms.example.com, read: { path: "/contract/{id}" } }',
    );
    const { repo } = await pullRequest('', config);

    const run = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json', '--format', 'markdown'], repo.dir);

    expect(run.code, run.stderr).toBe(0);
    const plan = parsePlan(await readFile(path.join(repo.dir, 'plan.json'), 'utf8'));
    expect(plan.madeWith).toEqual({
      version: packageVersion(),
      reads: true,
      collections: { Company: 'additive', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'authoritative' },
      maxRemovals: 25,
    });
    expect(run.stdout).toContain(` · contract-sync ${packageVersion()} · planned `);
    expect(run.stdout).toContain('from OrganizationalUnit, Owner and Type (the collections in authoritative mode)');
  });

  it('show reads a plan saved before madeWith was recorded', async () => {
    const { repo } = await pullRequest('');
    await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json'], repo.dir);
    const { madeWith: _recorded, ...older } = JSON.parse(await readFile(path.join(repo.dir, 'plan.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(repo.dir, 'old.json'), JSON.stringify(older));

    const shown = await runCli(['show', 'old.json', '--format', 'markdown'], repo.dir);

    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^### contract-sync plan\n\nHead `[0-9a-f]{7}` · base `main` at `[0-9a-f]{7}` · planned \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n/);
    expect(shown.stdout).toContain('in collections in authoritative mode (the default)');
  });
});
