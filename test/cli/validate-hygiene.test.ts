import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../engine/cli/main.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import type { CliRun } from '../helpers/cli.ts';

const DEMO = path.resolve(import.meta.dirname, '../../examples/demo-repo');

/** `contract-sync ...args` in `cwd`, at the time `now`. */
async function runAt(now: string, args: readonly string[], cwd: string): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (text: string) => (stdout += text), isTTY: false },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd,
    now: () => new Date(now),
  });
  return { code, stdout, stderr };
}

const TRACKED =
  'secret file secrets/acme-client-secret is inside the repository and tracked by git: credentials belong in a secrets manager, not in source control; remove it (git rm --cached) and rotate the secret';
const OVERLAP =
  'previousClientSecret is still configured more than 30 days after secretRotatedAt (2025-06-01): the rotation overlap has ended; remove it (and revoke the old secret)';
const AGE = 'the client secret of tenant acme was rotated on 2025-06-01, 12 or more months ago: rotate it and update secretRotatedAt';

describe('contract-sync validate: secrets hygiene', () => {
  let repo: TestRepo;
  let withSecret: string;

  beforeAll(async () => {
    repo = await createRepo();
    await cp(DEMO, repo.dir, { recursive: true });
    const config = (await readFile(path.join(repo.dir, 'contract-sync.yaml'), 'utf8'))
      .replace(
        '    clientSecret: { env: ACME_CLIENT_SECRET }\n',
        '    clientSecret: { file: secrets/acme-client-secret }\n    previousClientSecret: { env: ACME_CLIENT_SECRET_OLD }\n    secretRotatedAt: 2025-06-01\n',
      )
      .replace('{ env: GLOBEX_CLIENT_SECRET }', '{ file: secrets/globex-client-secret }');
    await writeFile(path.join(repo.dir, 'contract-sync.yaml'), config);
    // A throwaway value: the test only needs the file to exist in git.
    withSecret = await repo.commit('demo with a committed secret', { 'secrets/acme-client-secret': 'throwaway-not-a-secret\n' });
    // Present in the working tree but never added: no warning.
    await repo.write({ 'secrets/globex-client-secret': 'throwaway-not-a-secret\n' });
  });

  afterAll(() => repo.cleanup());

  it('warns with the config file and line, and exits 0', async () => {
    const run = await runAt('2026-11-22T12:00:00Z', ['validate'], repo.dir);

    expect(run).toEqual({
      code: 0,
      stdout: [
        `contract-sync.yaml:12:27  tenants.acme.clientSecret.file  warning: ${TRACKED}`,
        `contract-sync.yaml:13:27  tenants.acme.previousClientSecret  warning: ${OVERLAP}`,
        `contract-sync.yaml:14:22  tenants.acme.secretRotatedAt  warning: ${AGE}`,
        '',
        '0 errors, 3 warnings; 4 valid contracts in 3 files',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('prints them as JSON', async () => {
    const run = await runAt('2026-11-22T12:00:00Z', ['validate', '--format', 'json'], repo.dir);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([
      {
        severity: 'warning',
        code: 'secret-in-git',
        file: 'contract-sync.yaml',
        line: 12,
        column: 27,
        field: 'tenants.acme.clientSecret.file',
        message: TRACKED,
        tenant: 'acme',
      },
      {
        severity: 'warning',
        code: 'secret-overlap',
        file: 'contract-sync.yaml',
        line: 13,
        column: 27,
        field: 'tenants.acme.previousClientSecret',
        message: OVERLAP,
        tenant: 'acme',
      },
      {
        severity: 'warning',
        code: 'secret-age',
        file: 'contract-sync.yaml',
        line: 14,
        column: 22,
        field: 'tenants.acme.secretRotatedAt',
        message: AGE,
        tenant: 'acme',
      },
    ]);
  });

  it('prints them as GitHub warning annotations', async () => {
    const run = await runAt('2026-11-22T12:00:00Z', ['validate', '--format', 'github'], repo.dir);

    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      `::warning file=contract-sync.yaml,line=12,col=27,title=tenants.acme.clientSecret.file::${TRACKED}`,
      `::warning file=contract-sync.yaml,line=13,col=27,title=tenants.acme.previousClientSecret::${OVERLAP}`,
      `::warning file=contract-sync.yaml,line=14,col=22,title=tenants.acme.secretRotatedAt::${AGE}`,
    ]);
  });

  it.each([
    ['within the overlap', '2025-06-20T00:00:00Z', ['tenants.acme.clientSecret.file']],
    ['after the overlap', '2026-05-31T00:00:00Z', ['tenants.acme.clientSecret.file', 'tenants.acme.previousClientSecret']],
    [
      '12 months after the rotation',
      '2026-06-01T00:00:00Z',
      ['tenants.acme.clientSecret.file', 'tenants.acme.previousClientSecret', 'tenants.acme.secretRotatedAt'],
    ],
  ])('on the injected clock: %s', async (_, now, fields) => {
    const run = await runAt(now, ['validate', '--format', 'json'], repo.dir);

    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { field: string }[]).map((d) => d.field)).toEqual(fields);
  });

  it('with --ref, a secret file is tracked if that commit has it; without, if the index has it', async () => {
    await repo.git('rm', '-q', '--cached', 'secrets/acme-client-secret');
    await repo.git('commit', '-q', '-m', 'stop tracking the secret');
    const removed = (await repo.git('rev-parse', 'HEAD')).trim();

    const atOld = await runAt('2025-06-20T00:00:00Z', ['validate', '--ref', withSecret, '--format', 'json'], repo.dir);
    const atNew = await runAt('2025-06-20T00:00:00Z', ['validate', '--ref', removed, '--format', 'json'], repo.dir);
    const tree = await runAt('2025-06-20T00:00:00Z', ['validate', '--format', 'json'], repo.dir);

    expect((JSON.parse(atOld.stdout) as { code: string }[]).map((d) => d.code)).toEqual(['secret-in-git']);
    expect(JSON.parse(atNew.stdout)).toEqual([]);
    expect(JSON.parse(tree.stdout)).toEqual([]);
  });
});
