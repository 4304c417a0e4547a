import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../engine/cli/main.ts';
import { loadDesiredState, parsePlan, readConfig, serialiseStateRecord, type ContractFields } from '../../engine/index.ts';

const DEMO = path.resolve(import.meta.dirname, '../../examples/demo-repo');
const NOW = new Date('2026-11-22T10:00:00Z');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function plan(repo: string, args: readonly string[] = [], options: { tty?: boolean; env?: Record<string, string> } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(['plan', ...args], {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty ?? false },
    stderr: { write: (text: string) => (stderr += text) },
    env: options.env ?? {},
    cwd: repo,
    now: () => NOW,
  });
  return { code, stdout, stderr };
}

let repo: string;

beforeEach(async () => {
  repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-plan-'));
  await cp(DEMO, repo, { recursive: true });
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

/** Records `fields` as the known state of a contract, in the file backend's format. */
async function recordState(tenant: string, contractId: string, fields: ContractFields): Promise<void> {
  const dir = path.join(repo, '.contract-sync/state', tenant);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `${contractId}.json`), serialiseStateRecord({ version: 1, tenant, contractId, fields }));
}

/** Records every desired contract of the demo repository as applied. */
async function recordAllApplied(): Promise<Map<string, ContractFields>> {
  const { config } = await readConfig(path.join(repo, 'contract-sync.yaml'));
  const { contractSets } = await loadDesiredState(repo, config!);
  const all = new Map<string, ContractFields>();
  for (const set of contractSets) {
    for (const contract of set.contracts) {
      await recordState(set.tenant, contract.id, contract.fields);
      all.set(`${set.tenant}/${contract.id}`, contract.fields);
    }
  }
  return all;
}

describe('contract-sync plan', () => {
  it('with no state: every contract is known-unknown, scalars replaced, members added, nothing removed', async () => {
    const run = await plan(repo, ['--format', 'json']);

    expect(run.code).toBe(0);
    const document = parsePlan(run.stdout);
    const contracts = document.tenants.flatMap((t) => t.contracts);
    expect(contracts.length).toBeGreaterThan(0);
    expect(new Set(contracts.map((c) => c.knownFrom))).toEqual(new Set(['unknown']));
    expect(contracts.flatMap((c) => c.ops).some((op) => op.op === 'Remove')).toBe(false);
    expect(document.createdAt).toBe('2026-11-22T10:00:00.000Z');
    expect(document.source).toEqual({ repo: '.', ref: null, commit: null });
  });

  it('says what unknown known state means', async () => {
    const run = await plan(repo);

    expect(run.stdout).toMatch(/Known state unknown for \d+ contracts .*nothing is removed\./);
  });

  it.each([
    ['no state', false, 2],
    ['everything applied', true, 0],
  ])('--detailed-exitcode with %s exits %i', async (_name, applied, code) => {
    if (applied) await recordAllApplied();

    const run = await plan(repo, ['--detailed-exitcode']);

    expect(run.code).toBe(code);
  });

  it('without --detailed-exitcode exits 0 even with changes', async () => {
    const run = await plan(repo);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/to update/);
  });

  it('plans against the file state store: only what differs', async () => {
    const applied = await recordAllApplied();
    await recordState('acme', '4711', { ...applied.get('acme/4711'), Name: 'Old name', Company: [{ Id: 99, RelationType: 'Supplier' }] });

    const run = await plan(repo, ['--format', 'json', '--detailed-exitcode']);

    expect(run.code).toBe(2);
    const document = parsePlan(run.stdout);
    const changed = document.tenants.flatMap((t) =>
      t.contracts.filter((c) => c.action === 'update').map((c) => [t.tenant, c.id, c.knownFrom, c.ops.map((op) => `${op.op} ${op.path}`)]),
    );
    expect(changed).toEqual([['acme', '4711', 'state', ['Replace /Contract/Name', 'Remove /Contract/Company', 'Add /Contract/Company']]]);
  });

  it('--out writes the plan document, byte-identical to --format json, and the output is deterministic', async () => {
    const first = await plan(repo, ['--out', 'plan.json', '--format', 'json']);
    const second = await plan(repo, ['--format', 'json']);

    expect(await readFile(path.join(repo, 'plan.json'), 'utf8')).toBe(first.stdout);
    expect(second.stdout).toBe(first.stdout);
  });

  it('--tenant selects tenants', async () => {
    const run = await plan(repo, ['--tenant', 'globex', '--format', 'json']);

    expect(parsePlan(run.stdout).tenants.map((t) => t.tenant)).toEqual(['globex']);
  });

  it('refuses a tenant that is not configured', async () => {
    const run = await plan(repo, ['--tenant', 'initech']);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--tenant "initech" is not configured (known: acme, globex)');
  });

  it('refuses an unknown format', async () => {
    const run = await plan(repo, ['--format', 'yaml']);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--format must be one of text, markdown, json');
  });

  it('with an invalid desired state: the validation errors, exit 1, no plan written', async () => {
    await writeFile(path.join(repo, 'contracts/acme/bad.yaml'), 'tenant: acme\ncontracts:\n  "9001":\n    Area: 12a\n');

    const run = await plan(repo, ['--out', 'plan.json', '--detailed-exitcode']);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('contracts/acme/bad.yaml:4:11  Area  expected an integer, got "12a"');
    expect(run.stderr).toContain('no plan written');
    await expect(readFile(path.join(repo, 'plan.json'))).rejects.toThrow(/ENOENT/);
  });

  it('with a state file it cannot read: exit 1 naming the file', async () => {
    await recordState('acme', '4711', {});
    await writeFile(path.join(repo, '.contract-sync/state/acme/4711.json'), '{"version": 9}');

    const run = await plan(repo);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/4711\.json: state version 9 is not supported/);
  });

  it.each([
    ['a terminal', true, {}, true],
    ['a terminal with NO_COLOR', true, { NO_COLOR: '1' }, false],
    ['a pipe', false, {}, false],
  ])('colours on %s: %s', async (_name, tty, env, coloured) => {
    const run = await plan(repo, [], { tty, env });

    expect(run.stdout.includes('\u001b[')).toBe(coloured);
  });

  it('markdown never colours', async () => {
    const run = await plan(repo, ['--format', 'markdown'], { tty: true });

    expect(run.stdout).toMatch(/^### contract-sync plan/);
    expect(run.stdout).not.toContain('\u001b[');
  });
});
