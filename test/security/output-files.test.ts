/** Issue 21, items 4 and 5: --out and --report write regular files only; every file-system problem is one line. */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { configYaml } from '../helpers/files.ts';

let repo: TestRepo;

beforeAll(async () => {
  repo = await createRepo({
    'contract-sync.yaml': configYaml(['acme']),
    'contracts/acme/a.yaml': 'tenant: acme\ncontracts:\n  "1":\n    Name: One\n',
  });
});
afterAll(() => repo.cleanup());

const IS_ROOT = process.getuid?.() === 0;

/** A run that refused: exit 1, exactly one line on stderr, no stack, nothing on stdout. */
function expectOneLine(run: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(run.stderr).toMatch(pattern);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(run.code).toBe(1);
}

describe('plan --out', () => {
  it('writes a regular file whole, as before', async () => {
    const run = await runCli(['plan', '--out', 'plan.json'], repo.dir);
    expect(run.code).toBe(0);
    expect(JSON.parse(await readFile(path.join(repo.dir, 'plan.json'), 'utf8'))).toMatchObject({ summary: { changed: 1 } });
    await writeFile(path.join(repo.dir, 'plan.json'), 'old');
    expect((await runCli(['plan', '--out', 'plan.json'], repo.dir)).code).toBe(0);
    expect(await readFile(path.join(repo.dir, 'plan.json'), 'utf8')).toMatch(/^\{/);
  });

  it('a FIFO made by the test is refused and stays a FIFO', async () => {
    const fifo = path.join(repo.dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const format of ['text', 'markdown']) {
      const run = await runCli(['plan', '--format', format, '--out', 'out.fifo'], repo.dir);
      expectOneLine(run, /^contract-sync plan: --out out\.fifo: is a FIFO \(named pipe\); --out writes regular files only\n$/);
      expect((await lstat(fifo)).isFIFO()).toBe(true);
    }
  }, 10_000);

  it.skipIf(!IS_ROOT)('a character device made by the test is refused and stays a device', async () => {
    const device = path.join(repo.dir, 'null.dev');
    execFileSync('mknod', [device, 'c', '1', '3']);
    const run = await runCli(['plan', '--out', 'null.dev'], repo.dir);
    expectOneLine(run, /^contract-sync plan: --out null\.dev: is a character device; --out writes regular files only\n$/);
    expect((await lstat(device)).isCharacterDevice()).toBe(true);
  });

  it('a symbolic link to a special file (/proc/self/fd/1, /dev/null) is refused and stays a link', async () => {
    await symlink('/proc/self/fd/1', path.join(repo.dir, 'stdout.link'));
    await symlink('/dev/null', path.join(repo.dir, 'null.link'));
    for (const name of ['stdout.link', 'null.link']) {
      const run = await runCli(['plan', '--out', name], repo.dir);
      expectOneLine(run, /: is a symbolic link; --out writes regular files only\n$/);
      expect((await lstat(path.join(repo.dir, name))).isSymbolicLink()).toBe(true);
    }
  });

  it('a directory, a missing directory, and "-" are one line each', async () => {
    await mkdir(path.join(repo.dir, 'a-dir'), { recursive: true });
    expectOneLine(await runCli(['plan', '--out', 'a-dir'], repo.dir), /^contract-sync plan: --out a-dir: is a directory; --out writes regular files only\n$/);
    expectOneLine(
      await runCli(['plan', '--format', 'markdown', '--out', 'missing/dir/p.json'], repo.dir),
      /^contract-sync plan: --out missing\/dir\/p\.json: its directory missing\/dir cannot be used: no such file or directory \(ENOENT\)\n$/,
    );
    expectOneLine(await runCli(['plan', '--out', '-'], repo.dir), /^contract-sync plan: --out -: "-" is not supported/);
    expect((await stat(path.join(repo.dir, 'a-dir'))).isDirectory()).toBe(true);
  });

  it('leaves no temporary file behind', async () => {
    expect((await readdir(repo.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('apply and drift --report', () => {
  it('apply --report into a missing directory is refused before anything is planned or sent', async () => {
    const run = await runCli(['apply', '--auto-approve', '--report', 'missing/dir/r.json'], repo.dir, { ACME_SECRET: 'x' });
    expectOneLine(
      run,
      /^contract-sync apply: --report missing\/dir\/r\.json: its directory missing\/dir cannot be used: no such file or directory \(ENOENT\)\n$/,
    );
    expect(run.stdout).toBe('');
  });

  it('apply --report to a FIFO, drift --report to a directory: refused', async () => {
    expectOneLine(await runCli(['apply', '--auto-approve', '--report', 'out.fifo'], repo.dir, { ACME_SECRET: 'x' }), /--report out\.fifo: is a FIFO/);
    expectOneLine(await runCli(['drift', '--report', 'a-dir'], repo.dir, { ACME_SECRET: 'x' }), /^contract-sync drift: --report a-dir: is a directory/);
  }, 10_000);
});
