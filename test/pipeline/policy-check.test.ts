/**
 * The config's policy rules as a check of the tenant pipeline (engine/pipeline/checks.ts
 * policyCheck): one evaluator for plan and apply, a deny that stops the whole apply (nothing sent
 * for any tenant), the plan failing with the findings shown, and an unexpired exception that turns
 * a deny into a finding shown and not failing.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run, systemClock, type RunEffects } from '../../engine/index.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog } from '../helpers/fleet.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const fleet = createFleet(2, 4);
const [TENANT, CHANGED] = [...fleet.changed].find(([, ids]) => ids.size > 0)!;
const DENIED = [...CHANGED][0]!;

/** Denies any change to one contract (or asks for an override); `exception`: an exception for it, expiring on that date. */
function policies(exception?: string, action = 'deny'): string {
  return [
    'policies:',
    '  - name: frozen-contract',
    '    on: change',
    '    validations:',
    `      - expression: 'id != "${DENIED}"'`,
    '        messageExpression: \'"contract " + id + " is frozen"\'',
    `    action: ${action}`,
    ...(exception === undefined
      ? []
      : [
          'policyExceptions:',
          '  - policy: frozen-contract',
          `    contracts: ["${TENANT}/${DENIED}"]`,
          '    owner: jane@example.com',
          '    reason: the freeze is lifted',
          `    expires: ${exception}`,
        ]),
    '',
  ].join('\n');
}

let emulator: Emulator;
let repo: TestRepo;

beforeEach(async () => {
  emulator = await startEmulator(fleetSeed(fleet));
  repo = await createRepo({ ...fleetRepoFiles(fleet, emulator, { read: true, statePath: '.contract-sync/state' }), '.gitignore': '.contract-sync/\n' });
});

afterEach(async () => {
  await emulator.close();
  await repo.cleanup();
});

async function withPolicies(exception?: string, action?: string): Promise<void> {
  const config = path.join(repo.dir, 'contract-sync.yaml');
  await writeFile(config, `${await readFile(config, 'utf8')}${policies(exception, action)}`);
}

function effects(): RunEffects {
  return { cwd: repo.dir, env: { ...fleet.env, PATH: process.env.PATH ?? '' }, clock: systemClock, confirm: async () => true };
}

const APPLY = { kind: 'apply', where: { repo: '.' }, lockTimeoutMs: 5000, removals: { allow: false }, scope: 'every-contract', mode: 'send' } as const;
const FINDING = `denied         frozen-contract  ${TENANT}/${DENIED}`;

describe('policy rules in the check stage', () => {
  it('plan shows the deny with the contract and fails; the JSON plan carries it', async () => {
    await withPolicies();

    const text = await runCli(['plan', '--full', '--repo', repo.dir], ROOT);
    const json = await runCli(['plan', '--full', '--format', 'json', '--repo', repo.dir], ROOT);

    expect(text.stdout).toContain(`\n1 finding: 1 denied\n  ${FINDING} (`);
    expect(text.stdout).toContain(`): contract ${DENIED} is frozen\n`);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('contract-sync plan: 1 finding denies this change: an apply sends nothing while it stands');
    expect(JSON.parse(json.stdout).findings).toEqual([
      expect.objectContaining({ check: 'frozen-contract', action: 'deny', tenant: TENANT, contractId: DENIED }),
    ]);
    expect(json.code).toBe(1);
  });

  it("the JSON plan carries each contract's findings with it and counts them in the summary, written tenant by tenant or whole, and reads back", async () => {
    await withPolicies();

    const streamed = await runCli(['plan', '--full', '--format', 'json', '--out', 'plan.json', '--repo', repo.dir], repo.dir);
    const live = await runCli(['plan', '--full', '--refresh', '--format', 'json', '--repo', repo.dir], repo.dir, fleet.env);
    const shown = await runCli(['show', 'plan.json', '--format', 'json'], repo.dir);

    const own = [{ check: 'frozen-contract', action: 'deny', message: `contract ${DENIED} is frozen` }];
    const summary = { findings: 1, denied: 1, needsOverride: 0, warned: 0, overridden: 0, excepted: 0, expired: 0 };
    for (const output of [streamed.stdout, live.stdout, shown.stdout]) {
      const plan = JSON.parse(output) as { tenants: { tenant: string; contracts: { id: string; policy?: unknown }[] }[]; summary: { policy?: unknown } };
      const carrying = plan.tenants.flatMap((tenant) =>
        tenant.contracts.filter((contract) => contract.policy !== undefined).map((contract) => [tenant.tenant, contract.id, contract.policy]),
      );
      expect(carrying).toEqual([[TENANT, DENIED, own]]);
      expect(plan.summary.policy).toEqual(summary);
    }
    expect(shown.code).toBe(0);
    expect(streamed.stdout).toBe(await readFile(path.join(repo.dir, 'plan.json'), 'utf8'));
  });

  it('apply --dry-run fails where the apply would, naming the deny, and sends nothing', async () => {
    await withPolicies();
    const before = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;

    const dry = await runCli(['apply', '--dry-run', '--full', '--repo', repo.dir], ROOT, fleet.env);

    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain(`${FINDING} (`);
    expect(dry.stderr).toContain('contract-sync apply: 1 finding denies this change: an apply sends nothing while it stands');
    const logged = dry.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'check finding');
    expect(logged).toEqual([expect.objectContaining({ tenant: TENANT, contractId: DENIED, check: 'frozen-contract', action: 'deny', counts: true })]);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length).toBe(before);
  });

  it("drift fails on a deny as plan does (1, before --detailed-exitcode's 2), shows it in every format, and --fix sends nothing", async () => {
    await withPolicies();
    const before = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;

    const text = await runCli(['drift', '--repo', repo.dir], ROOT, fleet.env);
    const detailed = await runCli(['drift', '--detailed-exitcode', '--format', 'json', '--repo', repo.dir], ROOT, fleet.env);
    const markdown = await runCli(['drift', '--format', 'markdown', '--repo', repo.dir], ROOT, fleet.env);
    const fix = await runCli(['drift', '--fix', '--auto-approve', '--repo', repo.dir], ROOT, fleet.env);

    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`\n1 finding: 1 denied\n  ${FINDING} (`);
    // The comparison is made whatever a rule denies: no tenant is left unchecked.
    expect(text.stdout).not.toContain('Not checked');
    expect(text.stderr).toContain('contract-sync drift: 1 finding denies this change: an apply sends nothing while it stands');
    expect(detailed.code).toBe(1);
    expect(JSON.parse(detailed.stdout).findings).toEqual([
      expect.objectContaining({ check: 'frozen-contract', action: 'deny', tenant: TENANT, contractId: DENIED, message: `contract ${DENIED} is frozen` }),
    ]);
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toContain('#### Findings\n\n> [!CAUTION]\n> 1 finding denies this change');
    expect(fix.code).toBe(1);
    expect(fix.stdout).toContain(`not applied: frozen-contract denies ${TENANT}/${DENIED}: contract ${DENIED} is frozen; nothing sent in this run`);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length).toBe(before);
  });

  it('drift with an excepted finding shows it and exits as drift does (2 with --detailed-exitcode)', async () => {
    await withPolicies('2999-01-01');

    const detailed = await runCli(['drift', '--detailed-exitcode', '--repo', repo.dir], ROOT, fleet.env);

    expect(detailed.stdout).toContain(`\n1 finding: 1 excepted\n  excepted       frozen-contract  ${TENANT}/${DENIED} (`);
    expect(detailed.stderr).not.toContain('denies');
    expect(detailed.code).toBe(2);
  });

  it('a saved plan is judged again at apply with the rules at its commit: not the findings it carries, not the rules merged since', async () => {
    const config = path.join(repo.dir, 'contract-sync.yaml');
    const plain = await readFile(config, 'utf8');
    await withPolicies();
    await repo.commit('freeze a contract');
    const denied = await runCli(['plan', '--full', '--out', 'denied.json', '--repo', repo.dir], repo.dir);
    const document = JSON.parse(await readFile(path.join(repo.dir, 'denied.json'), 'utf8'));
    await writeFile(path.join(repo.dir, 'denied.json'), JSON.stringify({ ...document, findings: undefined }));
    await repo.commit('lift the freeze', { 'contract-sync.yaml': plain });
    const patches = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;

    const applied = await runCli(['apply', 'denied.json', '--auto-approve', '--repo', repo.dir], repo.dir, fleet.env);

    expect(denied.code).toBe(1);
    expect(document.findings).toEqual([expect.objectContaining({ check: 'frozen-contract', contractId: DENIED })]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain(`not applied: frozen-contract denies ${TENANT}/${DENIED}: contract ${DENIED} is frozen; nothing sent in this run`);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length).toBe(patches);
  });

  it("a saved plan made before a rule was merged is applied as its commit's rules allow", async () => {
    await repo.commit('no rules yet');
    const planned = await runCli(['plan', '--full', '--out', 'plan.json', '--repo', repo.dir], repo.dir);
    await withPolicies();
    await repo.commit('freeze a contract');

    const now = await runCli(['plan', '--full', '--repo', repo.dir], repo.dir);
    const applied = await runCli(['apply', 'plan.json', '--auto-approve', '--repo', repo.dir], repo.dir, fleet.env);

    expect(planned.code).toBe(0);
    expect(applied.stdout).not.toContain('frozen-contract');
    expect(applied.code).toBe(0);
    expect(now.code).toBe(1);
    expect((await requestLog(emulator)).some((entry) => entry.method === 'PATCH' && entry.path.endsWith(`/${DENIED}`))).toBe(true);
  });

  it('apply sends nothing for any tenant when a rule denies one contract', async () => {
    await withPolicies();
    const before = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;

    const outcome = await run(APPLY, effects());

    expect(outcome.kind).toBe('applied');
    if (outcome.kind !== 'applied') return;
    expect(outcome.report.summary.applied).toBe(0);
    expect(outcome.report.tenants.every((tenant) => tenant.error?.startsWith(`not applied: frozen-contract denies ${TENANT}/${DENIED}`))).toBe(true);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length).toBe(before);
  });

  it('apply --dry-run reports what the apply would do: no tenant would send while a rule denies one contract', async () => {
    await withPolicies();

    const outcome = await run({ ...APPLY, mode: 'dry-run' }, effects());

    expect(outcome.kind).toBe('applied');
    if (outcome.kind !== 'applied') return;
    expect(outcome.report.tenants.length).toBeGreaterThan(1);
    expect(outcome.report.summary.applied).toBe(0);
    expect(outcome.report.tenants.every((tenant) => tenant.error?.startsWith(`not applied: frozen-contract denies ${TENANT}/${DENIED}`))).toBe(true);
  });

  it('an unexpired exception shows the finding as excepted and lets the apply send', async () => {
    await withPolicies('2999-01-01');

    const outcome = await run(APPLY, effects());
    const text = await runCli(['plan', '--full', '--repo', repo.dir], ROOT);

    expect(outcome.kind).toBe('applied');
    if (outcome.kind !== 'applied') return;
    expect(outcome.report.tenants.flatMap((tenant) => [tenant.error, ...tenant.failures.map((failure) => failure.reason)]).filter(Boolean)).toEqual([]);
    expect(outcome.report.summary.applied).toBe(outcome.report.summary.changed);
    expect(outcome.report.findings).toEqual([expect.objectContaining({ check: 'frozen-contract', exception: expect.objectContaining({ state: 'excepted' }) })]);
    expect(text.code).toBe(0);
  });

  it('an override rule stops the apply until --override-policy lifts it with a reason, recorded in the history with who ran it', async () => {
    await withPolicies(undefined, 'override');
    const env = { ...fleet.env, PATH: process.env.PATH ?? '', GITHUB_ACTIONS: 'true', GITHUB_ACTOR: 'jane' };

    const stopped = await run(APPLY, effects());
    const lifted = await run({ ...APPLY, overrides: { policies: ['frozen-contract'], reason: 'approved in CMS-7' } }, { ...effects(), env });

    expect(stopped.kind === 'applied' && stopped.report.summary.applied).toBe(0);
    expect(lifted.kind).toBe('applied');
    if (lifted.kind !== 'applied' || stopped.kind !== 'applied') return;
    expect(lifted.report.summary.applied).toBe(lifted.report.summary.changed);
    expect(lifted.report.findings).toEqual([expect.objectContaining({ check: 'frozen-contract', overridden: { reason: 'approved in CMS-7', by: 'jane' } })]);
    const history = await runCli(['state', 'history', '--format', 'json', '--repo', repo.dir], ROOT);
    const runs = (JSON.parse(history.stdout) as { runs: { runId: string; overrides?: unknown; policy?: unknown }[] }).runs;
    expect(runs.find((entry) => entry.runId === lifted.report.runId)?.overrides).toEqual([
      { policy: 'frozen-contract', tenant: TENANT, contractId: DENIED, reason: 'approved in CMS-7', by: 'jane' },
    ]);
    expect(runs.find((entry) => entry.runId === lifted.report.runId)?.policy).toEqual({
      findings: 1,
      denied: 0,
      needsOverride: 0,
      warned: 0,
      overridden: 1,
      excepted: 0,
      expired: 0,
    });
    expect(runs.find((entry) => entry.runId === stopped.report.runId)?.policy).toMatchObject({ findings: 1, needsOverride: 1 });
    const text = await runCli(['state', 'history', '--repo', repo.dir], ROOT);
    expect(text.stdout).toContain(`  policy: 1 finding: 1 overridden\n  overridden: frozen-contract on ${TENANT}/${DENIED} by jane: approved in CMS-7\n`);
    expect(text.stdout).toContain('  policy: 1 finding: 1 needing an override\n');
  });

  it('refuses an override of a rule the config does not have, or without a reason, before anything is read or sent', async () => {
    await withPolicies(undefined, 'override');

    const unknown = await run({ ...APPLY, overrides: { policies: ['frozen-contracts'], reason: 'x' } }, effects());
    const usage = await runCli(['apply', '--repo', repo.dir, '--override-policy', 'frozen-contract', '--auto-approve'], ROOT);

    expect(unknown).toEqual({
      kind: 'refused',
      message: '--override-policy frozen-contracts: the config has no policy rule frozen-contracts (did you mean frozen-contract?); nothing sent',
    });
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('--override-policy needs --reason TEXT');
  });
});
