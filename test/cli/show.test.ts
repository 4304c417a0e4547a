/** `contract-sync show PLAN.json`: a saved plan, from a real repository, rendered as `plan` rendered it; and every way the file can be wrong. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { main } from '../../engine/cli/main.ts';
import { runCli, type CliRun } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';
import { pullRequestRepo } from '../helpers/pull-request-repo.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';

const AT_BASE = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning
  "4712":
    Name: Security services
`;

const ON_BRANCH = `tenant: acme
contracts:
  "4711":
    Name: Facility cleaning 2028
    Company:
      - { Id: 12, RelationType: Supplier }
  "4712":
    Name: Security services
`;

/** A repository whose branch changes a contract of main; the plan a pull request would show is saved as plan.json. */
async function savedPlan(format: string): Promise<{ repo: TestRepo; planned: CliRun }> {
  const { repo } = await pullRequestRepo({
    base: { 'contract-sync.yaml': configYaml(['acme']), 'contracts/acme/a.yaml': AT_BASE },
    branch: 'renew',
    message: 'Renew 4711',
    changes: { 'contracts/acme/a.yaml': ON_BRANCH },
  });
  const planned = await runCli(['plan', '--ref', 'HEAD', '--base', 'main', '--out', 'plan.json', '--format', format], repo.dir);
  return { repo, planned };
}

describe('contract-sync show', () => {
  it.each(['text', 'markdown', 'json'])('prints a saved plan in %s exactly as plan printed it', async (format) => {
    const { repo, planned } = await savedPlan(format);

    const shown = await runCli(['show', 'plan.json', '--format', format], repo.dir);

    expect(planned.code, planned.stderr).toBe(0);
    expect(shown).toEqual({ code: 0, stdout: planned.stdout, stderr: '' });
    expect(shown.stdout).toContain('4711');
  });

  it('prints text by default, coloured on a terminal unless --no-color or NO_COLOR', async () => {
    const { repo, planned } = await savedPlan('text');
    async function onTerminal(args: string[], env: Record<string, string> = {}): Promise<string> {
      let stdout = '';
      await main(args, { stdout: { write: (text: string) => (stdout += text), isTTY: true }, stderr: { write: () => true }, env, cwd: repo.dir });
      return stdout;
    }

    const plain = await runCli(['show', 'plan.json'], repo.dir);
    const coloured = await onTerminal(['show', 'plan.json']);
    const noColorFlag = await onTerminal(['show', 'plan.json', '--no-color']);
    const noColorEnv = await onTerminal(['show', 'plan.json'], { NO_COLOR: '1' });

    expect(plain.stdout).toBe(planned.stdout);
    expect(coloured).toContain('\u001b[');
    // Without its SGR codes (ESC [ n m), the coloured plan is the plain one.
    const uncoloured = coloured
      .split('\u001b')
      .map((part, index) => (index === 0 ? part : part.replace(/^\[\d+m/, '')))
      .join('');
    expect(uncoloured).toBe(planned.stdout);
    expect(noColorFlag).toBe(planned.stdout);
    expect(noColorEnv).toBe(planned.stdout);
  });

  it.each([
    ['a missing file', undefined, 'contract-sync show: plan.json: no such file\n'],
    ['a file that is not JSON', '{"version": 1,', /^contract-sync show: plan\.json: the plan is not JSON \(.+\)\n$/],
    [
      'a plan of an unknown version',
      '{"version": 2, "tenants": []}',
      'contract-sync show: plan.json: plan version 2 is not supported (this contract-sync reads version 1)\n',
    ],
    [
      'a JSON list',
      '[]',
      'contract-sync show: plan.json: not a contract-sync plan: the file holds a list; a plan is an object with version, createdAt, source, tenants and summary, as contract-sync plan --out PLAN.json writes it\n',
    ],
    [
      'an object without a version',
      '{"name": "package"}',
      'contract-sync show: plan.json: not a contract-sync plan: it has no "version"; a plan is an object with version, createdAt, source, tenants and summary, as contract-sync plan --out PLAN.json writes it\n',
    ],
    [
      'a drift report',
      '{"version": 1, "runId": "r", "fix": false, "tenants": []}',
      /^contract-sync show: plan\.json: not a contract-sync plan: it looks like a drift report \(it has a runId\); a plan is an object/,
    ],
    ['a document that is not a plan', '{"version": 1, "tenants": []}', /^contract-sync show: plan\.json: invalid plan: .+\n$/],
  ])('refuses %s in one line naming the file, exit 1', async (_name, content, stderr) => {
    const repo = await createRepo({});
    onTestFinished(() => repo.cleanup());
    if (content !== undefined) await writeFile(path.join(repo.dir, 'plan.json'), content);

    const run = await runCli(['show', 'plan.json'], repo.dir);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    if (typeof stderr === 'string') expect(run.stderr).toBe(stderr);
    else expect(run.stderr).toMatch(stderr);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it.each([
    [['show'], 'contract-sync show: name the plan file to show (written by contract-sync plan --out); see contract-sync show --help\n'],
    [['show', 'a.json', 'b.json'], 'contract-sync show: unexpected argument "b.json"; see contract-sync show --help\n'],
    [
      ['show', 'a.json', '--format', 'github'],
      'contract-sync show: --format must be one of text, markdown, json; got "github"; see contract-sync show --help\n',
    ],
  ])('refuses bad usage %j with exit 1', async (args, stderr) => {
    const run = await runCli(args, process.cwd());

    expect(run).toEqual({ code: 1, stdout: '', stderr });
  });
});
