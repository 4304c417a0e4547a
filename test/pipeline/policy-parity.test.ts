/**
 * One evaluator for every run (issue 37 item 3): validate, plan (from the state store, as one
 * document and written tenant by tenant, and read live), apply --dry-run and drift, given the
 * same rules and the same contracts, find the same things. The rules are the DORA pack of
 * examples/policies beside rules that warn, fail closed and judge a change; exceptions make one
 * finding excepted and another expired. Against the emulator, with a state store that holds what
 * is live, so that every run plans the same ops.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../engine/diagnostic/finding.ts';
import { run, systemClock, type RunEffects } from '../../engine/index.ts';
import { startEmulator, type Emulator } from '../../emulator/index.ts';
import { createRepo, type TestRepo } from '../git/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import { createFleet, fleetRepoFiles, fleetSeed, requestLog, storeMatchingLive } from '../helpers/fleet.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const fleet = createFleet(2, 15, 11);

/** The DORA pack's rules (without its exceptions), then three more. */
async function rules(excepted: string, expired: string): Promise<string> {
  const pack = await readFile(path.join(ROOT, 'examples/policies/contract-sync.yaml'), 'utf8');
  const start = pack.indexOf('\npolicies:\n') + 1;
  const end = pack.indexOf('\npolicyExceptions:');
  return [
    pack.slice(start, end === -1 ? undefined : end).trimEnd(),
    '  - name: low-category',
    '    on: contract',
    '    validations:',
    '      - expression: object.Category >= 3',
    '        messageExpression: \'"category " + string(object.Category) + " is low"\'',
    '    action: warn',
    '  - name: notice-in-hours',
    '    on: contract',
    '    matchConditions:',
    '      - name: long-notice',
    '        expression: has(object.SupplierNoticePeriod) && object.SupplierNoticePeriod.Days > 60',
    '    validations:',
    '      - expression: object.SupplierNoticePeriod.Hours > 0',
    '        message: a long notice is written in hours',
    '    action: deny',
    '  - name: renamed',
    '    on: change',
    '    validations:',
    '      - expression: \'!ops.exists(o, o.path == "/Contract/Name")\'',
    '        messageExpression: \'"renamed to " + object.Name\'',
    '    action: warn',
    'policyExceptions:',
    '  - policy: dora-types-need-eba-code',
    `    contracts: ["${excepted}"]`,
    '    owner: jane@example.com',
    '    reason: the EBA code is being assigned',
    '    expires: 2999-01-01',
    '  - policy: dora-types-need-eba-code',
    `    contracts: ["${expired}"]`,
    '    owner: jane@example.com',
    '    reason: it was being assigned',
    '    ticket: CMS-9',
    '    expires: 2001-01-01',
    '',
  ].join('\n');
}

let emulator: Emulator;
let repo: TestRepo;
let onContract: ReadonlySet<string>;

beforeAll(async () => {
  emulator = await startEmulator(fleetSeed(fleet));
  const dora = fleet.desired.flatMap((set) =>
    set.contracts.filter((contract) => contract.fields.Type?.some((type) => type.IsDora)).map((contract) => `${set.tenant}/${contract.id}`),
  );
  const files = fleetRepoFiles(fleet, emulator, { read: true, statePath: '.contract-sync/state' });
  const config = `${files['contract-sync.yaml']!}${await rules(dora[0]!, dora[1]!)}`;
  onContract = new Set([...config.matchAll(/- name: (\S+)\n {4}on: contract\n/g)].map((match) => match[1]!));
  repo = await createRepo({ ...files, 'contract-sync.yaml': config, '.gitignore': '.contract-sync/\n' });
  await mkdir(path.join(repo.dir, '.contract-sync'), { recursive: true });
  await storeMatchingLive(path.join(repo.dir, '.contract-sync/state'), fleet);
});

afterAll(async () => {
  await emulator.close();
  await repo.cleanup();
});

function effects(): RunEffects {
  return { cwd: repo.dir, env: { ...fleet.env, PATH: process.env.PATH ?? '' }, clock: systemClock, confirm: async () => true };
}

/** A finding as data, in one order: what every run must agree on. */
function comparable(findings: readonly Finding[]): string[] {
  return findings
    .map((finding) =>
      JSON.stringify([
        finding.check,
        finding.action,
        finding.tenant,
        finding.contractId,
        finding.file,
        finding.line,
        finding.message,
        finding.exception ?? null,
      ]),
    )
    .sort();
}

const WHERE = { repo: '.' } as const;

describe('the same rules and contracts give the same findings in every run', () => {
  it('validate, plan (document, tenant by tenant, live), apply --dry-run and drift', async () => {
    const patches = (await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length;

    const validate = await run({ kind: 'validate', where: WHERE }, effects());
    const plan = await run({ kind: 'plan', where: WHERE, known: 'store', scope: 'every-contract' }, effects());
    const live = await run({ kind: 'plan', where: WHERE, known: 'live', scope: 'every-contract' }, effects());
    const streamed = await runCli(['plan', '--full', '--format', 'json', '--repo', repo.dir], ROOT);
    const dryRun = await run(
      { kind: 'apply', where: WHERE, lockTimeoutMs: 5000, removals: { allow: false }, scope: 'every-contract', mode: 'dry-run' },
      effects(),
    );
    const drift = await run({ kind: 'drift', where: WHERE, lockTimeoutMs: 5000, removals: { allow: false }, mode: 'report' }, effects());

    if (validate.kind !== 'validated' || plan.kind !== 'planned' || live.kind !== 'planned' || dryRun.kind !== 'applied' || drift.kind !== 'checked')
      throw new Error(
        `a run did not finish: ${JSON.stringify([validate, plan, live, dryRun, drift].filter((outcome) => !['validated', 'planned', 'applied', 'checked'].includes(outcome.kind)))}`,
      );
    const planned = comparable(plan.plan.findings ?? []);
    const verdicts = new Set((plan.plan.findings ?? []).map((finding) => (finding.exception ? finding.exception.state : finding.action)));
    const checks = new Set((plan.plan.findings ?? []).map((finding) => finding.check));
    // The case covers what it claims: denies, warnings, the excepted and the expired, a rule failing closed, on: change rules.
    expect([...verdicts].sort()).toEqual(['deny', 'excepted', 'expired', 'warn']);
    expect([...checks].sort()).toEqual(['dora-types-need-eba-code', 'low-category', 'notice-in-hours', 'renamed']);
    expect(plan.plan.findings?.some((finding) => finding.message.includes('the rule fails closed'))).toBe(true);
    expect(comparable(validate.findings)).toEqual(planned.filter((finding) => onContract.has(JSON.parse(finding)[0] as string)));
    expect(comparable(live.plan.findings ?? [])).toEqual(planned);
    const written = JSON.parse(streamed.stdout) as {
      findings: Finding[];
      tenants: { tenant: string; contracts: { id: string; file: string; line: number; policy?: Finding[] }[] }[];
    };
    expect(comparable(written.findings)).toEqual(planned);
    // Each contract carries its own, written as it was planned.
    const carried = written.tenants.flatMap(({ tenant, contracts }) =>
      contracts.flatMap(({ id, file, line, policy }) => (policy ?? []).map((finding) => ({ ...finding, tenant, contractId: id, file, line }))),
    );
    expect(comparable(carried)).toEqual(planned);
    expect(comparable(dryRun.report.findings ?? [])).toEqual(planned);
    expect(comparable(drift.drift.findings ?? [])).toEqual(planned);
    expect((await requestLog(emulator)).filter((entry) => entry.method === 'PATCH').length).toBe(patches);
  });
});
