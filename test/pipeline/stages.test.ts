/**
 * The tenant pipeline as the runs compose it (engine/pipeline/compose.ts), through the library
 * against the emulator and a real git repository: the phase each stage announces, in order, for
 * every run; and a check registered from outside (RunEffects.checks), with no stage or run edited,
 * whose findings reach the text, JSON and markdown plans and the apply report.
 */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run, systemClock, type Check, type RunEffects, type RunEvent, type RunRequest } from '../../engine/index.ts';
import { renderRunSummary } from '../../engine/apply/run-report.ts';
import { planSpools } from '../../engine/output/plan-spools.ts';
import { renderPlanJson } from '../../engine/plan/render-json.ts';
import { renderPlanMarkdown } from '../../engine/plan/render-markdown.ts';
import { renderPlanText } from '../../engine/plan/render-text.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { createFleet, fleetRepoFiles, fleetSeed } from '../helpers/fleet.ts';

const fleet = createFleet(2, 4);
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

function effects(events: RunEvent[], checks?: readonly Check[]): RunEffects {
  return {
    cwd: repo.dir,
    env: { ...fleet.env, PATH: process.env.PATH ?? '' },
    clock: systemClock,
    onEvent: (event) => events.push(event),
    confirm: async () => true,
    ...(checks ? { checks } : {}),
  };
}

const WHERE = { repo: '.', ref: 'HEAD' };
const SENDING = { where: WHERE, lockTimeoutMs: 5000, removals: { allow: false } };
const LEARN = ['read-input', 'read-known', 'plan', 'check'];
const APPLY = ['read-input', 'lock', 'read-known', 'plan', 'check', 'confirm', 'send', 'record'];

describe('the phases of each run', () => {
  it.each<[string, RunRequest, readonly string[]]>([
    ['validate', { kind: 'validate', where: WHERE }, ['read-input']],
    ['plan', { kind: 'plan', where: WHERE, known: 'store', scope: 'every-contract' }, LEARN],
    ['plan --refresh', { kind: 'plan', where: WHERE, known: 'live', scope: 'every-contract' }, LEARN],
    ['apply', { kind: 'apply', ...SENDING, scope: 'every-contract', mode: 'send' }, APPLY],
    ['apply --dry-run', { kind: 'apply', ...SENDING, scope: 'every-contract', mode: 'dry-run' }, LEARN],
    ['drift', { kind: 'drift', ...SENDING, mode: 'report' }, LEARN],
    ['drift --fix', { kind: 'drift', ...SENDING, mode: 'fix' }, APPLY],
  ])('%s', async (_name, request, phases) => {
    const events: RunEvent[] = [];

    const outcome = await run(request, effects(events));

    expect(['validated', 'planned', 'applied', 'checked']).toContain(outcome.kind);
    expect(events.flatMap((event) => (event.type === 'phase' ? [event.phase] : []))).toEqual(phases);
  });

  it('plan written tenant by tenant (a sink) goes through the same stages', async () => {
    const events: RunEvent[] = [];
    const spools = planSpools('json', { outFile: undefined, color: false });

    const outcome = await run({ kind: 'plan', where: WHERE, known: 'store', scope: 'every-contract', sink: spools.sink }, effects(events));
    spools.discard();

    expect(outcome.kind).toBe('streamed');
    expect(events.flatMap((event) => (event.type === 'phase' ? [event.phase] : []))).toEqual(LEARN);
  });
});

/** Warns on every contract it is shown: a check that knows nothing of the stages or the runs. */
const everyContract: Check = {
  name: 'every-contract',
  at: 'planned',
  denies: 'contract',
  shownIn: 'findings',
  judge: ({ tenant, planned }) =>
    planned.map((contract) => ({
      check: 'every-contract',
      action: 'warn',
      tenant,
      contractId: contract.id,
      file: contract.file,
      line: contract.line,
      message: `looked at ${contract.id}`,
    })),
};

const CONTRACTS = fleet.desired.reduce((sum, set) => sum + set.contracts.length, 0);
const FIRST = fleet.desired[0]!;
const FIRST_ID = FIRST.contracts[0]!.id;
const FIRST_LINE = `every-contract  ${FIRST.tenant}/${FIRST_ID} (${FIRST.file}:${FIRST.contracts[0]!.line}): looked at ${FIRST_ID}`;

async function streamed(format: 'text' | 'json'): Promise<string> {
  const spools = planSpools(format, { outFile: undefined, color: false });
  const outcome = await run({ kind: 'plan', where: WHERE, known: 'store', scope: 'every-contract', sink: spools.sink }, effects([], [everyContract]));
  if (outcome.kind !== 'streamed') throw new Error(`expected a streamed plan, got ${outcome.kind}`);
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  await spools.writeTo(out, outcome);
  return Buffer.concat(chunks).toString('utf8');
}

describe('a check registered from outside', () => {
  it('shows its findings in the text, JSON and markdown plans', async () => {
    const outcome = await run({ kind: 'plan', where: WHERE, known: 'store', scope: 'every-contract' }, effects([], [everyContract]));

    expect(outcome.kind).toBe('planned');
    if (outcome.kind !== 'planned') return;
    expect(outcome.plan.findings).toHaveLength(CONTRACTS);
    expect(renderPlanText(outcome.plan)).toContain(`${CONTRACTS} findings: ${CONTRACTS} warning\n  warning        ${FIRST_LINE}\n`);
    expect(JSON.parse(renderPlanJson(outcome.plan)).findings).toContainEqual(expect.objectContaining({ check: 'every-contract', contractId: FIRST_ID }));
    expect(renderPlanMarkdown(outcome.plan)).toContain(`#### Findings\n\n${CONTRACTS} findings: ${CONTRACTS} warning.\n\n- ⚠️ **warning** · every-contract · `);
  });

  it('shows its findings in the plans written tenant by tenant, text and JSON', async () => {
    const text = await streamed('text');
    const json = await streamed('json');

    expect(text).toContain(`${CONTRACTS} findings: ${CONTRACTS} warning\n  warning        ${FIRST_LINE}\n`);
    expect(JSON.parse(json).findings).toHaveLength(CONTRACTS);
  });

  it('shows its findings in a live plan and in the apply report, and a warning sends everything', async () => {
    const live = await run({ kind: 'plan', where: WHERE, known: 'live', scope: 'every-contract' }, effects([], [everyContract]));
    const applied = await run({ kind: 'apply', ...SENDING, scope: 'every-contract', mode: 'send' }, effects([], [everyContract]));

    expect(live.kind === 'planned' && live.plan.findings?.length).toBe(CONTRACTS);
    expect(applied.kind).toBe('applied');
    if (applied.kind !== 'applied') return;
    expect(applied.report.findings).toHaveLength(CONTRACTS);
    expect(applied.report.summary.failed).toBe(0);
    expect(renderRunSummary(applied.report)).toContain(`\n${CONTRACTS} findings: ${CONTRACTS} warning\n  warning        ${FIRST_LINE}\n`);
  });

  it('refuses what its deny names: the contract is not sent, the others are', async () => {
    const [tenant, changed] = [...fleet.changed].find(([, ids]) => ids.size > 0)!;
    const denied = [...changed][0]!;
    const denyOne: Check = {
      ...everyContract,
      name: 'deny-one',
      judge: (judged) =>
        judged.sending
          .filter((contract) => judged.tenant === tenant && contract.id === denied)
          .map((contract) => ({ check: 'deny-one', action: 'deny', tenant, contractId: contract.id, message: 'not this one' })),
    };

    const applied = await run({ kind: 'apply', ...SENDING, scope: 'every-contract', mode: 'send' }, effects([], [denyOne]));

    expect(applied.kind).toBe('applied');
    if (applied.kind !== 'applied') return;
    const failures = applied.report.tenants.flatMap((report) => report.failures);
    expect(failures.map(({ contractId, outcome, reason }) => ({ contractId, outcome, reason }))).toEqual([
      { contractId: denied, outcome: 'skipped', reason: 'not this one' },
    ]);
    expect(applied.report.summary.applied).toBe(applied.report.summary.changed - 1);
  });

  it('stops the whole run when a check that denies runs denies anything: nothing is sent for any tenant', async () => {
    const [tenant, changed] = [...fleet.changed].find(([, ids]) => ids.size > 0)!;
    const denied = [...changed][0]!;
    const denyRun: Check = {
      ...everyContract,
      name: 'deny-run',
      denies: 'run',
      judge: (judged) =>
        judged.planned
          .filter((contract) => judged.tenant === tenant && contract.id === denied)
          .map((contract) => ({ check: 'deny-run', action: 'deny', tenant, contractId: contract.id, message: 'forbidden' })),
    };

    const applied = await run({ kind: 'apply', ...SENDING, scope: 'every-contract', mode: 'send' }, effects([], [denyRun]));

    expect(applied.kind).toBe('applied');
    if (applied.kind !== 'applied') return;
    expect(applied.report.summary.applied).toBe(0);
    expect(new Set(applied.report.tenants.flatMap((report) => report.failures.map((failure) => failure.reason)))).toEqual(
      new Set(['not sent: denied by deny-run']),
    );
    expect(applied.report.tenants.map((report) => report.error)).toEqual(
      fleet.tenants.map(() => `not applied: deny-run denies ${tenant}/${denied}: forbidden; nothing sent in this run`),
    );
    expect(applied.report.findings).toEqual([{ check: 'deny-run', action: 'deny', tenant, contractId: denied, message: 'forbidden' }]);
  });
});
