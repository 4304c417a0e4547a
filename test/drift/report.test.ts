import { describe, expect, it } from 'vitest';
import type { ContractResult, RunReport, TenantReport } from '../../engine/apply/run-report.ts';
import type { ContractSet } from '../../engine/desired/types.ts';
import type { Finding } from '../../engine/diagnostic/finding.ts';
import {
  createDriftReport,
  driftFailed,
  driftRemains,
  renderDriftJson,
  renderDriftMarkdown,
  renderDriftText,
  type DriftReport,
} from '../../engine/drift/index.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import type { PlanDocument } from '../../engine/plan/types.ts';
import type { KnownContract, KnownState } from '../../engine/state/types.ts';

const CREATED_AT = '2027-03-01T06:00:00.000Z';
const SOURCE = { repo: '.', ref: null, commit: 'c0ffee0000000000000000000000000000000000' };
const SUPPLIER = { Id: 12, RelationType: 'Supplier' };
const PARTNER = { Id: 99, RelationType: 'Partner' };

const DESIRED: ContractSet[] = [
  {
    tenant: 'acme',
    file: 'contracts/acme.yaml',
    contracts: [
      { id: '4711', line: 3, column: 3, fields: { Name: 'Cleaning', Company: [SUPPLIER] } },
      { id: '4712', line: 7, column: 3, fields: { Name: 'Catering 2028' } },
      { id: '4713', line: 10, column: 3, fields: { Name: 'Security' } },
      { id: '4714', line: 13, column: 3, fields: { Name: 'Gardening' } },
    ],
  },
  { tenant: 'globex', file: 'contracts/globex.yaml', contracts: [{ id: '9001', line: 3, column: 3, fields: { Name: 'Lease' } }] },
];

/** What the service holds: 4711 edited by hand (Name, a partner added), 4712 still the old name, 4714 never applied. */
const LIVE: Readonly<Record<string, Record<string, ContractFields>>> = {
  acme: {
    '4711': { Name: 'Cleaning (by hand)', Company: [SUPPLIER, PARTNER] },
    '4712': { Name: 'Catering' },
    '4713': { Name: 'Security' },
    '4714': { Name: 'Garden' },
  },
  globex: { '9001': { Name: 'Lease' } },
};

const LAST_APPLIED: KnownState = new Map([
  [
    'acme',
    new Map<string, KnownContract>([
      ['4711', { fields: { Name: 'Cleaning', Company: [SUPPLIER] }, from: 'state' }],
      ['4712', { fields: { Name: 'Catering' }, from: 'state' }],
      ['4713', { fields: { Name: 'Security' }, from: 'state' }],
    ]),
  ],
]);

function livePlan(unreadable: readonly string[] = [], failedTenants: readonly string[] = []): PlanDocument {
  const known: KnownState = new Map(
    Object.entries(LIVE)
      .filter(([tenant]) => !failedTenants.includes(tenant))
      .map(([tenant, contracts]) => [tenant, new Map(Object.entries(contracts).map(([id, fields]) => [id, { fields, from: 'live' as const }]))]),
  );
  const sets = DESIRED.map((set) => ({ ...set, contracts: set.contracts.filter((contract) => !unreadable.includes(contract.id)) }));
  return createPlan(sets, known, { createdAt: CREATED_AT, source: SOURCE });
}

function tenantReport(tenant: string, failures: ContractResult[] = [], error?: string): TenantReport {
  return { tenant, contracts: 0, changed: 0, applied: 0, ops: 0, requests: 0, retries: 0, throttles: 0, failures, ...(error === undefined ? {} : { error }) };
}

function runReport(tenants: TenantReport[], dryRun = true): RunReport {
  return {
    version: 1,
    runId: 'run-1',
    startedAt: CREATED_AT,
    finishedAt: CREATED_AT,
    dryRun,
    source: SOURCE,
    tenants,
    summary: { tenants: tenants.length, changed: 0, applied: 0, failed: 0, ops: 0, requests: 0, retries: 0 },
  };
}

function detected(): DriftReport {
  return createDriftReport({ plan: livePlan(), run: runReport([tenantReport('acme'), tenantReport('globex')]), lastApplied: LAST_APPLIED, fix: false });
}

describe('createDriftReport', () => {
  it('lists each drifted contract with its fields, live, desired and cause', () => {
    const report = detected();

    expect(report.tenants[0]!.contracts).toEqual([
      {
        id: '4711',
        file: 'contracts/acme.yaml',
        line: 3,
        drift: [
          { field: 'Name', live: 'Cleaning (by hand)', desired: 'Cleaning', lastApplied: 'Cleaning', cause: 'changed-outside-git' },
          { field: 'Company', member: 'Id 99, RelationType "Partner"', live: PARTNER, desired: null, lastApplied: null, cause: 'changed-outside-git' },
        ],
        ops: [
          { op: 'Replace', path: '/Contract/Name', value: 'Cleaning' },
          { op: 'Remove', path: '/Contract/Company', value: PARTNER },
        ],
      },
      expect.objectContaining({
        id: '4712',
        drift: [expect.objectContaining({ field: 'Name', live: 'Catering', desired: 'Catering 2028', cause: 'not-yet-applied' })],
      }),
      expect.objectContaining({ id: '4714', drift: [expect.objectContaining({ cause: 'never-applied' })] }),
    ]);
    expect(report.tenants[1]).toEqual({ tenant: 'globex', managed: 1, contracts: [], errors: [] });
    expect(report).toMatchObject({ version: 1, createdAt: CREATED_AT, runId: 'run-1', source: SOURCE, fix: false });
    expect(report.summary).toEqual({ tenants: 2, contracts: 5, drifted: 3, changes: 4, changedOutsideGit: 2, notYetApplied: 1, neverApplied: 1, errors: 0 });
    expect(driftRemains(report)).toBe(true);
    expect(driftFailed(report)).toBe(false);
  });

  it('lists a contract that could not be read as an error, and counts it as managed', () => {
    const failure: ContractResult = {
      contractId: '4713',
      file: 'contracts/acme.yaml',
      line: 10,
      outcome: 'failed',
      ops: 0,
      status: 404,
      reason: 'could not read the contract: 404',
    };

    const report = createDriftReport({
      plan: livePlan(['4713']),
      run: runReport([tenantReport('acme', [failure]), tenantReport('globex')]),
      lastApplied: LAST_APPLIED,
      fix: false,
    });

    expect(report.tenants[0]!.errors).toEqual([{ id: '4713', file: 'contracts/acme.yaml', line: 10, status: 404, reason: 'could not read the contract: 404' }]);
    expect(report.tenants[0]!.managed).toBe(4);
    expect(report.summary).toMatchObject({ contracts: 5, errors: 1 });
    expect(driftFailed(report)).toBe(true);
  });

  it('shows no drift for a tenant that could not start (its plan has no live state), only its error', () => {
    const report = createDriftReport({
      plan: livePlan([], ['globex']),
      run: runReport([tenantReport('acme'), tenantReport('globex', [], 'token refused: invalid_client')]),
      lastApplied: LAST_APPLIED,
      fix: false,
    });

    expect(report.tenants[1]).toEqual({ tenant: 'globex', managed: 1, contracts: [], errors: [], error: 'token refused: invalid_client' });
    expect(report.summary).toMatchObject({ drifted: 3, errors: 1 });
    expect(driftFailed(report)).toBe(true);
  });

  it('with fix, records what became of each drifted contract', () => {
    const failure: ContractResult = { contractId: '4712', file: 'contracts/acme.yaml', line: 7, outcome: 'failed', ops: 1, status: 409, reason: 'conflict' };

    const report = createDriftReport({
      plan: livePlan(),
      run: runReport([tenantReport('acme', [failure]), tenantReport('globex')], false),
      lastApplied: LAST_APPLIED,
      fix: true,
    });

    expect(report.tenants[0]!.contracts.map((contract) => [contract.id, contract.fix])).toEqual([
      ['4711', { outcome: 'applied', status: null }],
      ['4712', { outcome: 'failed', status: 409, reason: 'conflict' }],
      ['4714', { outcome: 'applied', status: null }],
    ]);
    expect(report.tenants[0]!.errors).toEqual([]);
    expect(report.summary).toMatchObject({ fixed: 2, fixFailed: 1, errors: 0 });
    expect(driftFailed(report)).toBe(true);
    expect(driftRemains(report)).toBe(true);
  });

  it('with every fix applied, no drift remains', () => {
    const report = createDriftReport({
      plan: livePlan(),
      run: runReport([tenantReport('acme'), tenantReport('globex')], false),
      lastApplied: LAST_APPLIED,
      fix: true,
    });

    expect(driftRemains(report)).toBe(false);
    expect(driftFailed(report)).toBe(false);
  });
});

describe('renderDriftText', () => {
  it('shows each drifted field as live -> desired with its cause, and the summary line', () => {
    const text = renderDriftText(detected());

    expect(text).toContain('tenant acme: 3 of 4 contracts drifted\n  ~ 4711  contracts/acme.yaml:3  (2 ops to fix)\n');
    expect(text).toContain('      Name: "Cleaning (by hand)" -> "Cleaning"  (changed outside git)\n');
    expect(text).toContain('      Company (Id 99, RelationType "Partner"): { Id: 99, RelationType: "Partner" } -> (absent)  (changed outside git)\n');
    expect(text).toContain('      Name: "Catering" -> "Catering 2028"  (not yet applied)\n');
    expect(text).toContain('      Name: "Garden" -> "Gardening"  (never applied)\n');
    expect(text).toContain('tenant globex: no drift (1 contract)\n');
    expect(text.trimEnd().split('\n').slice(-2)).toEqual([
      '3 contracts drifted (4 differences): 2 changed outside git, 1 not yet applied, 1 never applied.',
      'Next: To make the service match git again, run contract-sync drift --fix (or merge a change to the YAML and let apply run). ' +
        'To keep a change made on the service instead, change the YAML to match it in a pull request ' +
        '(contract-sync import --tenant T --id ID writes a contract as the service holds it).',
    ]);
    expect(text).not.toContain('\u001b');
  });

  it('says "No drift" when every contract matches', () => {
    const plan = createPlan(DESIRED.slice(1), new Map([['globex', new Map([['9001', { fields: { Name: 'Lease' }, from: 'live' as const }]])]]), {
      createdAt: CREATED_AT,
      source: SOURCE,
    });

    const text = renderDriftText(createDriftReport({ plan, run: runReport([tenantReport('globex')]), lastApplied: new Map(), fix: false }));

    expect(text).toBe('tenant globex: no drift (1 contract)\n\nNo drift: the contract matches the desired state.\n');
  });

  it('lists unreadable contracts and tenant errors', () => {
    const failure: ContractResult = {
      contractId: '4713',
      file: 'contracts/acme.yaml',
      line: 10,
      outcome: 'failed',
      ops: 0,
      status: 404,
      reason: 'could not read the contract: 404 Not Found',
    };
    const report = createDriftReport({
      plan: livePlan(['4713'], ['globex']),
      run: runReport([tenantReport('acme', [failure]), tenantReport('globex', [], 'token refused')]),
      lastApplied: LAST_APPLIED,
      fix: false,
    });

    const text = renderDriftText(report, { color: true });

    expect(text).toContain('Not checked:');
    expect(text).toContain('  acme 4713 (contracts/acme.yaml:10) 404: could not read the contract: 404 Not Found\n');
    expect(text).toContain('tenant globex\u001b[0m: \u001b[31mnot checked\u001b[0m\n');
    expect(text).toContain('  globex: token refused\n');
    expect(text).toContain('\u001b[31m(changed outside git)\u001b[0m');
    expect(text).toContain('2 errors (listed under "Not checked").');
  });

  it('says that no drift was found but errors kept contracts from being checked', () => {
    const plan = createPlan(DESIRED.slice(1), new Map(), { createdAt: CREATED_AT, source: SOURCE });
    const report = createDriftReport({ plan, run: runReport([tenantReport('globex', [], 'token refused')]), lastApplied: new Map(), fix: false });

    const text = renderDriftText(report);

    expect(text).toBe(
      'tenant globex: not checked\n\nNot checked:\n  globex: token refused\n\nNo drift found, but 1 error kept contracts from being checked (listed under "Not checked").\n' +
        'Next: The contracts under "Not checked" were not compared: deal with what each line says (a contract not on the service: ' +
        'remove it from the YAML, or correct its ContractId), then run contract-sync drift again.\n',
    );
  });
});

describe('renderDriftMarkdown', () => {
  it('renders the verdict, a table per tenant and each contract as a table', () => {
    const markdown = renderDriftMarkdown(detected());

    expect(markdown).toMatchSnapshot();
  });

  it('is headed like the plan comment: the commit, the contract-sync version and the time (issue 23, item 5)', () => {
    const atHead = { ...detected(), source: { repo: '.', ref: 'HEAD', commit: SOURCE.commit } };

    expect(renderDriftMarkdown(atHead, { version: '1.2.3' })).toMatch(
      /^### contract-sync drift\n\nCommit `c0ffee0` · contract-sync 1\.2\.3 · checked 2027-03-01 06:00:00 UTC\n\n\*\*3 contracts drifted/,
    );
    expect(renderDriftMarkdown(detected())).toContain('\nWorking tree (uncommitted edits included) at `c0ffee0` · checked 2027-03-01 06:00:00 UTC\n');
  });

  it('says what to run next, by what it found', () => {
    const fixedAll = createDriftReport({
      plan: livePlan(),
      run: runReport([tenantReport('acme'), tenantReport('globex')], false),
      lastApplied: LAST_APPLIED,
      fix: true,
    });
    const conflict: ContractResult = { contractId: '4712', file: 'contracts/acme.yaml', line: 7, outcome: 'failed', ops: 1, status: 409, reason: 'conflict' };
    const fixedSome = createDriftReport({
      plan: livePlan(),
      run: runReport([tenantReport('acme', [conflict]), tenantReport('globex')], false),
      lastApplied: LAST_APPLIED,
      fix: true,
    });
    const unread = createDriftReport({
      plan: createPlan(DESIRED.slice(1), new Map(), { createdAt: CREATED_AT, source: SOURCE }),
      run: runReport([tenantReport('globex', [], 'token refused')]),
      lastApplied: new Map(),
      fix: false,
    });

    expect(renderDriftMarkdown(detected())).toMatch(
      /\n\*\*Next:\*\* To make the service match git again, run `contract-sync drift --fix` .*`contract-sync import --tenant T --id ID`/,
    );
    expect(renderDriftMarkdown(fixedAll)).toContain('\n**Next:** Nothing to run: the service matches git.\n');
    expect(renderDriftMarkdown(fixedSome)).toContain(
      '\n**Next:** Each contract not fixed says why: once that is dealt with, run `contract-sync drift --fix` again.\n',
    );
    expect(renderDriftMarkdown(unread)).toContain('**Next:** The contracts under "Not checked" were not compared: ');
    expect(renderDriftMarkdown(unread)).toContain('then run `contract-sync drift` again.\n');
  });

  it('says to fix or except a policy finding that stands, as drift --fix would send nothing', () => {
    const finding = { tenant: 'acme', contractId: '4711', file: 'contracts/acme.yaml', line: 3, message: 'no Responsible owner' } as const;
    const exception = { state: 'excepted', owner: 'jane@example.com', reason: 'owner being appointed', expires: '2027-12-31' } as const;
    // A run that a policy denies sends nothing: with --fix, every drifted contract is not sent.
    const notSent = ['4711', '4712', '4714'].map((contractId): ContractResult => ({
      contractId,
      file: 'contracts/acme.yaml',
      line: 3,
      outcome: 'skipped',
      ops: 1,
      status: null,
      reason: 'not sent: denied by dora-owner',
    }));
    function withFindings(findings: Finding[], fix = false): DriftReport {
      return createDriftReport({
        plan: livePlan(),
        run: { ...runReport([tenantReport('acme', fix ? notSent : []), tenantReport('globex')], !fix), findings },
        lastApplied: LAST_APPLIED,
        fix,
      });
    }

    const denied = renderDriftText(withFindings([{ ...finding, check: 'dora-owner', action: 'deny' }]));
    const covered = renderDriftMarkdown(
      withFindings([
        { ...finding, check: 'dora-owner', action: 'deny', exception },
        { ...finding, check: 'dates-in-order', action: 'warn' },
      ]),
    );
    const overridable = renderDriftMarkdown(
      withFindings(
        [
          { ...finding, check: 'dora-owner', action: 'deny' },
          { ...finding, check: 'expenses-rise', action: 'override' },
        ],
        true,
      ),
    );

    expect(denied.trimEnd().split('\n').at(-1)).toBe(
      'Next: Policy rule dora-owner denies, so contract-sync drift --fix would send nothing. Change the contract in git so that the rule holds, ' +
        'or add an exception for the finding under policyExceptions in the config (an owner, a reason, an expiry date), then run contract-sync drift --fix. ' +
        'To keep a change made on the service instead, change the YAML to match it in a pull request ' +
        '(contract-sync import --tenant T --id ID writes a contract as the service holds it).',
    );
    expect(covered).toMatch(/\n\*\*Next:\*\* To make the service match git again, run `contract-sync drift --fix` /);
    expect(overridable).toContain(
      '\n**Next:** Policy rules dora-owner, expenses-rise deny, so `contract-sync drift --fix` would send nothing. ' +
        'Change the contract in git so that the rule holds, or add an exception for the finding under policyExceptions in the config ' +
        '(an owner, a reason, an expiry date), then run `contract-sync drift --fix`. ' +
        'A rule whose action is override can instead be lifted for one run: `contract-sync drift --fix --override-policy NAME --reason TEXT`.',
    );
  });

  it('keeps a value with pipes and backticks inside its cell', () => {
    const plan = createPlan(DESIRED.slice(1), new Map([['globex', new Map([['9001', { fields: { Name: 'a | b `c`' }, from: 'live' as const }]])]]), {
      createdAt: CREATED_AT,
      source: SOURCE,
    });

    const markdown = renderDriftMarkdown(createDriftReport({ plan, run: runReport([tenantReport('globex')]), lastApplied: new Map(), fix: false }));

    expect(markdown).toContain('| Name | <code>&quot;a &#124; b \\`c\\`&quot;</code> | <code>&quot;Lease&quot;</code> | never applied |');
  });

  it('stays under maxLength and says what it left out', () => {
    const contracts = Array.from({ length: 300 }, (_, i) => ({
      id: String(1000 + i),
      line: 3 + i,
      column: 3,
      fields: { Name: `Contract ${i}`, Comment: 'x'.repeat(200) },
    }));
    const plan = createPlan(
      [{ tenant: 'acme', file: 'contracts/acme.yaml', contracts }],
      new Map([['acme', new Map(contracts.map((c) => [c.id, { fields: {}, from: 'live' as const }]))]]),
      {
        createdAt: CREATED_AT,
        source: SOURCE,
      },
    );

    const markdown = renderDriftMarkdown(createDriftReport({ plan, run: runReport([tenantReport('acme')]), lastApplied: new Map(), fix: false }), {
      maxLength: 20_000,
    });

    expect(markdown.length).toBeLessThanOrEqual(20_000);
    expect(markdown).toMatch(/Shortened to stay under 20,000 characters: \d+ drifted contracts not shown/);
  });
});

describe('renderDriftJson', () => {
  it('is the report as JSON, which parses back to it', () => {
    const report = detected();

    const json = renderDriftJson(report);

    expect(JSON.parse(json)).toEqual(report);
    expect(json.endsWith('}\n')).toBe(true);
  });
});
