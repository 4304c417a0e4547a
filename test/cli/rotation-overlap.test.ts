/**
 * The rotation overlap at run time: a run whose token took previousClientSecret after the 30-day
 * overlap (or with no secretRotatedAt) goes on, and says so in its output, its JSON report and its
 * logs, naming the tenant and the day the overlap ended. Against the emulator's real identity provider.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { cleanupsAfterEach } from '../helpers/cleanups.ts';
import { runCli } from '../helpers/cli.ts';
import { writeTree } from '../helpers/files.ts';

const OLD = 'throwaway-old-secret-0123456789';
const NEW = 'throwaway-new-secret-not-registered-yet';
const ENV = { ACME_SECRET: NEW, ACME_SECRET_OLD: OLD };

let emulator: Emulator | undefined;
const cleanups = cleanupsAfterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

async function setup(rotation: string, registered: string) {
  const running = await startEmulator({
    realm: 'cms',
    tenants: { acme: { clients: [{ clientId: 'cs-acme', secret: registered, scopes: ['core:read', 'core:write'] }], contracts: { '4711': { Name: 'old' } } } },
  });
  emulator = running;
  const { dir, cleanup } = await writeTree({
    'contract-sync.yaml': [
      `api: { baseUrl: "${running.urls.baseUrl}", read: { path: "/contract/{id}" } }`,
      `auth: { url: "${running.urls.authUrl}", realm: cms }`,
      'tenants:',
      '  acme:',
      '    clientId: cs-acme',
      '    clientSecret: { env: ACME_SECRET }',
      '    previousClientSecret: { env: ACME_SECRET_OLD }',
      rotation,
      '',
    ].join('\n'),
    'contracts/acme.yaml': 'tenant: acme\ncontracts:\n  "4711": { Name: new }\n',
  });
  cleanups.push(cleanup);
  return dir;
}

describe('a token obtained with previousClientSecret at run time', () => {
  it('after the overlap ended: the run goes on and warns in its output, its JSON report and its logs', async () => {
    const dir = await setup('    secretRotatedAt: 2026-01-01', OLD);

    const run = await runCli(['apply', '--report', 'report.json'], dir, ENV);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as { warnings?: unknown };

    const message =
      'tenant acme: the token was obtained with previousClientSecret after the 30-day rotation overlap ended on 2026-01-30 (secretRotatedAt 2026-01-01): register the new secret as clientSecret and remove previousClientSecret; the service may refuse the old secret at any time';
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`\nWarnings:\n  ${message}\n`);
    expect(report.warnings).toEqual([{ code: 'secret-overlap-ended', tenant: 'acme', overlapEndedOn: '2026-01-30', message }]);
    const logged = run.stderr
      .split('\n')
      .filter((line) => line.includes('after the rotation overlap'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([expect.objectContaining({ level: 40, tenant: 'acme', secretRotatedAt: '2026-01-01', overlapEndedOn: '2026-01-30' })]);
    expect(run.stderr).not.toContain(OLD);
  });

  it('with no secretRotatedAt: warns that the end of the overlap is unknown', async () => {
    const dir = await setup('', OLD);

    const run = await runCli(['apply', '--report', 'report.json'], dir, ENV);
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as { warnings?: { overlapEndedOn: unknown; message: string }[] };

    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'tenant acme: the token was obtained with previousClientSecret, and no secretRotatedAt is configured, so the end of the 30-day rotation overlap is unknown',
    );
    expect(report.warnings?.map((warning) => warning.overlapEndedOn)).toEqual([null]);
  });

  it('within the overlap, or with the new secret accepted: no warning, and the report has no warnings key', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const within = await setup(`    secretRotatedAt: ${today}`, OLD);
    const runWithin = await runCli(['apply', '--report', 'report.json'], within, ENV);
    await emulator!.close();
    emulator = undefined;
    const current = await setup('    secretRotatedAt: 2026-01-01', NEW);
    const runCurrent = await runCli(['apply', '--report', 'report.json'], current, ENV);

    for (const [run, dir] of [
      [runWithin, within],
      [runCurrent, current],
    ] as const) {
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain('Warnings:');
      expect(JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'))).not.toHaveProperty('warnings');
    }
  });
});
