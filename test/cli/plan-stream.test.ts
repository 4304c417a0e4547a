import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../engine/cli/main.ts';

const DEMO = path.resolve(import.meta.dirname, '../../examples/demo-repo');

let repo: string;

beforeEach(async () => {
  repo = await mkdtemp(path.join(tmpdir(), 'contract-sync-plan-stream-'));
  await cp(DEMO, repo, { recursive: true });
});

afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

async function plan(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['plan', ...args], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: repo,
    now: () => new Date('2026-11-22T10:00:00Z'),
  });
  return { code, stdout, stderr };
}

describe('plan one tenant at a time', () => {
  it.each([['text'], ['json']])('--format %s: an error in the last tenant, after the first was planned, writes no plan anywhere', async (format) => {
    // globex is planned after acme: acme's piece is spooled by then.
    await writeFile(path.join(repo, 'contracts/globex/bad.yaml'), 'tenant: globex\ncontracts:\n  "9001":\n    Area: 12a\n');

    const run = await plan(['--format', format, '--out', 'plan.json']);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('contracts/globex/bad.yaml:4:11  Area  expected an integer, got "12a"');
    expect(await readdir(repo)).not.toContain('plan.json');
    expect((await readdir(repo)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('--out and --format json write the same document, and no spool is left behind', async () => {
    const run = await plan(['--format', 'json', '--out', 'plan.json']);

    expect(run.code).toBe(0);
    expect(await readFile(path.join(repo, 'plan.json'), 'utf8')).toBe(run.stdout);
    expect(JSON.parse(run.stdout).tenants.map((tenant: { tenant: string }) => tenant.tenant)).toEqual(['acme', 'globex']);
    expect((await readdir(repo)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
