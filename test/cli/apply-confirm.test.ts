/**
 * apply and drift --fix on a terminal (stdin and stdout TTYs, answered through a stream): the plan
 * first, then the question, and nothing sent unless the answer is yes; and the removal guard's
 * flags and config. In-process against the emulator; test/cli/apply-tty.test.ts runs the real CLI
 * under a pseudo-terminal.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../engine/cli/main.ts';
import { fileStateStore } from '../../engine/state/file-store.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli, type CliRun } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, type Fleet } from '../helpers/fleet.ts';

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** Two tenants of 6 contracts, 4 of each changed, 2 of them removing a Company member. */
async function setup(options: { read?: boolean; config?: string } = {}): Promise<{ fleet: Fleet; dir: string }> {
  const fleet = createFleet(2, 6);
  emulator = await startEmulator(fleetSeed(fleet));
  const files = fleetRepoFiles(fleet, emulator, { read: options.read ?? true });
  if (options.config !== undefined) files['contract-sync.yaml'] += `${options.config}\n`;
  const { dir, cleanup } = await writeTree(files);
  cleanups.push(cleanup);
  return { fleet, dir };
}

/** The CLI in-process on a terminal: `answer` is what the person types (undefined: Ctrl-D at once). */
async function onTerminal(args: readonly string[], dir: string, env: Record<string, string>, answer: string | undefined): Promise<CliRun> {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  stdin.end(answer);
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdin,
    stdout: { write: (text: string) => (stdout += text), isTTY: true },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...env, NO_COLOR: '1' },
    cwd: dir,
  });
  return { code, stdout, stderr };
}

async function patches(): Promise<number> {
  return (await requestLog(emulator!)).filter((entry) => entry.kind === 'api' && entry.method === 'PATCH').length;
}

const QUESTION = /Apply \d+ ops to 8 contracts in 2 tenants\? Only 'yes' is accepted: /;

describe('apply on a terminal', () => {
  it('prints the plan, asks, and sends on yes', async () => {
    const { fleet, dir } = await setup();

    const run = await onTerminal(['apply'], dir, fleet.env, 'yes\n');

    expect(run.code, run.stderr).toBe(0);
    const question = run.stdout.search(QUESTION);
    expect(question).toBeGreaterThan(run.stdout.indexOf('8 of 12 contracts in 2 tenants to update'));
    expect(run.stdout.indexOf('tenant tenant-a: 4 to update')).toBeLessThan(question);
    expect(run.stdout.indexOf('Apply: 8 contracts changed')).toBeGreaterThan(question);
    expect(await patches()).toBe(8);
  });

  it.each([
    ['no', 'no\n'],
    ['"yes please"', 'yes please\n'],
    ['"Yes"', 'Yes\n'],
    ['the end of input', undefined],
  ])('sends nothing, writes no state, releases the locks and exits 1 on %s', async (_name, answer) => {
    const { fleet, dir } = await setup();

    const run = await onTerminal(['apply'], dir, fleet.env, answer);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(QUESTION);
    expect(run.stdout).toMatch(/\nApply cancelled\.\n$/);
    expect(run.stdout).not.toContain('Apply: ');
    expect(await patches()).toBe(0);
    // The lock files are gone; only the tenants' empty directories are left.
    const entries = await readdir(path.join(dir, '.contract-sync/state'), { recursive: true, withFileTypes: true }).catch(() => []);
    expect(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
  });

  it('asks nothing in a dry run, with a saved plan (reviewed when it was made), or with nothing to change', async () => {
    const { fleet, dir } = await setup();
    await runCli(['plan', '--refresh', '--out', 'plan.json'], dir, fleet.env);

    const dryRun = await onTerminal(['apply', '--dry-run'], dir, fleet.env, undefined);
    const saved = await onTerminal(['apply', 'plan.json'], dir, fleet.env, undefined);
    const nothing = await onTerminal(['apply'], dir, fleet.env, undefined);

    for (const run of [dryRun, saved, nothing]) {
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).not.toContain("Only 'yes' is accepted");
    }
    expect(saved.stdout).toContain('Apply: 8 contracts changed');
    expect(nothing.stdout).toContain('Apply: nothing to do');
  });

  it('asks nothing with --auto-approve', async () => {
    const { fleet, dir } = await setup();

    const run = await onTerminal(['apply', '--auto-approve'], dir, fleet.env, undefined);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain("Only 'yes' is accepted");
    expect(await patches()).toBe(8);
  });

  it.each([
    ['no', 'no\n', 0],
    ['yes', 'yes\n', 8],
  ])(
    'stdout to a file or a pipe, stdin a terminal (apply > out.txt): asks on stderr after the per-tenant summary; sends on yes only (%s)',
    async (_name, answer, sent) => {
      const { fleet, dir } = await setup();
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      stdin.end(answer);
      let stdout = '';
      let stderr = '';

      const code = await main(['apply'], {
        stdin,
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text), isTTY: true },
        env: { ...fleet.env, NO_COLOR: '1' },
        cwd: dir,
      });

      expect(code, stderr).toBe(sent === 0 ? 1 : 0);
      expect(stdout).toContain('tenant tenant-a: 4 to update');
      expect(stdout).not.toContain("Only 'yes' is accepted");
      expect(stderr).toMatch(
        new RegExp(
          '\\n8 of 12 contracts in 2 tenants to update, \\d+ ops\\.\\n' +
            '  tenant-a: 4 to update, \\d+ ops, 2 members removed\\n' +
            '  tenant-b: 4 to update, \\d+ ops, 2 members removed\\n' +
            'The whole plan was written to standard output \\(not this terminal\\)\\.\\n\\n' +
            "Apply \\d+ ops to 8 contracts in 2 tenants\\? Only 'yes' is accepted: ",
        ),
      );
      expect(await patches()).toBe(sent);
    },
  );

  it('asks nothing without a terminal (CI), and still prints the plan before the summary', async () => {
    const { fleet, dir } = await setup();

    const run = await runCli(['apply'], dir, fleet.env);

    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("Only 'yes' is accepted");
    expect(run.stdout.indexOf('tenant tenant-a: 4 to update')).toBeLessThan(run.stdout.indexOf('Apply: 8 contracts changed'));
  });
});

describe('the removal guard on apply', () => {
  // The fleet removes 2 Company members in each tenant.
  it('refuses every tenant over --max-removals, naming count, tenant and flag, and sends nothing', async () => {
    const { fleet, dir } = await setup();

    const run = await runCli(['apply', '--max-removals', '1'], dir, fleet.env);

    expect(run.code).toBe(1);
    for (const tenant of fleet.tenants) {
      expect(run.stdout).toContain(
        `removal guard: the plan of tenant ${tenant} removes 2 collection members, more than the limit of 1 (--max-removals, safety.maxRemovals); nothing sent for ${tenant}`,
      );
    }
    expect(run.stdout).toContain('--allow-removals');
    expect(await patches()).toBe(0);
  });

  it('applies at the limit, and with --allow-removals above it', async () => {
    const { fleet, dir } = await setup();

    const atLimit = await runCli(['apply', '--max-removals', '2', '--dry-run'], dir, fleet.env);
    const allowed = await runCli(['apply', '--max-removals', '0', '--allow-removals'], dir, fleet.env);

    expect(atLimit.code, atLimit.stdout).toBe(0);
    expect(allowed.code, allowed.stdout).toBe(0);
    expect(await patches()).toBe(8);
  });

  it('takes the limit from safety.maxRemovals, and --max-removals over it', async () => {
    const { fleet, dir } = await setup({ config: 'safety: { maxRemovals: 1 }' });

    const refused = await runCli(['apply', '--dry-run'], dir, fleet.env);
    const flag = await runCli(['apply', '--dry-run', '--max-removals', '5'], dir, fleet.env);

    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('more than the limit of 1');
    expect(flag.code, flag.stdout).toBe(0);
  });

  it('shows the refusal before the question, and asks only about the tenants it would send', async () => {
    const { fleet, dir } = await setup();
    const store = fileStateStore(path.join(dir, '.contract-sync/state'));

    const run = await onTerminal(['apply', '--max-removals', '1', '--tenant', 'tenant-a'], dir, fleet.env, 'yes\n');

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('removal guard: the plan of tenant tenant-a');
    // Nothing would be sent: nothing is asked.
    expect(run.stdout).not.toContain("Only 'yes' is accepted");
    expect(await store.readRun('tenant-a')).toBeUndefined();
  });

  it.each([['-1'], ['many'], ['2.5']])('refuses --max-removals %s', async (value) => {
    const { fleet, dir } = await setup();

    const run = await runCli(['apply', `--max-removals=${value}`], dir, fleet.env);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`--max-removals must be a whole number of collection members, 0 or more; got "${value}"`);
  });
});

describe('drift --fix on a terminal', () => {
  const FIX_QUESTION = /Correct \d+ ops on 8 contracts in 2 tenants\? Only 'yes' is accepted: /;

  it('prints the corrections, asks its own question, and corrects nothing unless yes', async () => {
    const { fleet, dir } = await setup();

    const declined = await onTerminal(['drift', '--fix'], dir, fleet.env, 'no\n');
    const before = await patches();
    const accepted = await onTerminal(['drift', '--fix'], dir, fleet.env, 'yes\n');

    expect(declined.code).toBe(1);
    expect(declined.stdout).toMatch(FIX_QUESTION);
    expect(declined.stdout.indexOf('tenant tenant-a: 4 to update')).toBeLessThan(declined.stdout.search(FIX_QUESTION));
    expect(declined.stdout).toMatch(/\nFix cancelled\.\n$/);
    expect(before).toBe(0);
    expect(accepted.code, accepted.stdout).toBe(0);
    expect(accepted.stdout).toMatch(FIX_QUESTION);
    expect(await patches()).toBe(8);
  });

  it('with stdout to a file (drift --fix > out.txt) still asks, on stderr, after the per-tenant summary', async () => {
    const { fleet, dir } = await setup();
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    stdin.end('no\n');
    let stdout = '';
    let stderr = '';

    const code = await main(['drift', '--fix'], {
      stdin,
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text), isTTY: true },
      env: { ...fleet.env, NO_COLOR: '1' },
      cwd: dir,
    });

    expect(code).toBe(1);
    expect(stdout).toContain('tenant tenant-a: 4 to update');
    expect(stderr).toMatch(/ {2}tenant-b: 4 to update, \d+ ops, 2 members removed\nThe whole plan was written to standard output \(not this terminal\)\.\n\n/);
    expect(stderr).toMatch(FIX_QUESTION);
    expect(await patches()).toBe(0);
  });

  it('holds the removal guard, and refuses its flags without --fix', async () => {
    const { fleet, dir } = await setup();

    const refused = await runCli(['drift', '--fix', '--max-removals', '1'], dir, fleet.env);
    const withoutFix = await runCli(['drift', '--auto-approve', '--allow-removals'], dir, fleet.env);

    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('removal guard: the plan of tenant tenant-a removes 2 collection members');
    expect(await patches()).toBe(0);
    expect(withoutFix.code).toBe(1);
    expect(withoutFix.stderr).toContain('--auto-approve, --allow-removals only apply with --fix');
  });
});
