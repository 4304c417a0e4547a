import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../engine/config/index.ts';
import { parseTargetPattern, selectTargets, type TargetPattern } from '../../engine/desired/target.ts';
import { validateDesiredState, type ContractSet, type DesiredFile } from '../../engine/desired/index.ts';
import { findTouchedContracts } from '../../engine/plan/touched-contracts.ts';
import { createPlan } from '../../engine/plan/create-plan.ts';
import { planByTenant, type PlanByTenantInput } from '../../engine/pipeline/stream.ts';
import { wholeTenant } from '../../engine/plan/plan-tenant.ts';
import type { BaseInput } from '../../engine/plan/scope.ts';
import { planJsonPieces, renderPlanJson } from '../../engine/plan/render-json.ts';
import { renderPlanText, textPlanInMemory } from '../../engine/plan/render-text.ts';
import { planSpools } from '../../engine/output/plan-spools.ts';
import type { PlanSource } from '../../engine/plan/types.ts';
import type { KnownContract, KnownState } from '../../engine/state/types.ts';

const CONFIG: Pick<Config, 'tenants' | 'collections'> = {
  tenants: {
    acme: { clientId: 'cs-acme', clientSecret: { env: 'A' } },
    globex: { clientId: 'cs-globex', clientSecret: { env: 'G' } },
    initech: { clientId: 'cs-initech', clientSecret: { env: 'I' } },
  },
  collections: { Company: 'authoritative', OrganizationalUnit: 'authoritative', Owner: 'authoritative', Type: 'additive' },
};

function file(path: string, content: string): DesiredFile {
  return { path, content };
}

const FILES: readonly DesiredFile[] = [
  file('contracts/globex.yaml', 'tenant: globex\ncontracts:\n  "7": { Name: Seven, Company: [{ Id: 1, RelationType: Client }] }\n  "8": { Name: Eight }\n'),
  file('contracts/acme/b.yaml', 'tenant: acme\ncontracts:\n  "2": { Name: Two }\n  "1": { Name: One, Comment: "ü ✓" }\n'),
  file('contracts/acme/a.yaml', 'tenant: acme\ncontracts:\n  "3": { Name: Three }\n'),
  file('contracts/initech.yaml', '{ tenant: initech, contracts: { "5": { Name: Five } } }\n'),
];

const KNOWN: KnownState = new Map([
  [
    'acme',
    new Map<string, KnownContract>([
      ['1', { fields: { Name: 'One' }, from: 'state' }],
      ['3', { fields: { Name: 'Three' }, from: 'state' }],
    ]),
  ],
  [
    'globex',
    new Map<string, KnownContract>([
      ['8', { fields: { Name: 'Old' }, from: 'state' }],
      // A member the desired state no longer lists, in an authoritative collection: removed.
      [
        '7',
        {
          fields: {
            Name: 'Seven',
            Company: [
              { Id: 1, RelationType: 'Client' },
              { Id: 2, RelationType: 'Supplier' },
            ],
          },
          from: 'state',
        },
      ],
    ]),
  ],
]);

const CREATED_AT = '2026-11-22T10:00:00.000Z';
const SOURCE: PlanSource = { repo: '.', ref: null, commit: 'c0ffee' };
const BASE_SOURCE: PlanSource = { ...SOURCE, base: { ref: 'main', commit: 'ba5e', mergeBase: 'ba5e' } };
const BASE: BaseInput = {
  changedPaths: new Set(['contracts/acme/b.yaml', 'contracts/gone.yaml']),
  baseContractSets: [
    {
      tenant: 'acme',
      file: 'contracts/acme/b.yaml',
      contracts: [
        { id: '2', line: 3, column: 3, fields: { Name: 'Two' } },
        { id: '4', line: 4, column: 3, fields: { Name: 'Four' } },
      ],
    },
    { tenant: 'umbrella', file: 'contracts/gone.yaml', contracts: [{ id: '6', line: 3, column: 3, fields: {} }] },
  ],
};

interface Case {
  readonly tenants?: readonly string[];
  readonly targets?: readonly string[];
  readonly excludes?: readonly string[];
  readonly base?: boolean;
  /** The state store is empty (a first pull request). */
  readonly nothingKnown?: boolean;
}

function knownOf(options: Case): KnownState {
  return options.nothingKnown ? new Map() : KNOWN;
}

function patterns(values: readonly string[] = []): TargetPattern[] {
  return values.map((value) => parseTargetPattern(value) as TargetPattern);
}

/** What plan does with everything at once (engine/run/input.ts and createPlan). */
function wholePlan(options: Case) {
  const desired = validateDesiredState(FILES, CONFIG);
  let sets: readonly ContractSet[] = options.tenants ? desired.contractSets.filter((set) => options.tenants!.includes(set.tenant)) : desired.contractSets;
  const targets = { targets: patterns(options.targets), excludes: patterns(options.excludes) };
  if (targets.targets.length + targets.excludes.length > 0) {
    const selection = selectTargets(sets, targets);
    if (selection.kind !== 'selected') throw new Error('unmatched');
    sets = selection.contractSets;
  }
  let touched = options.base ? findTouchedContracts(desired.contractSets, BASE.baseContractSets, BASE.changedPaths) : undefined;
  if (touched && options.tenants) {
    touched = {
      contracts: new Map([...touched.contracts].filter(([tenant]) => options.tenants!.includes(tenant))),
      noLongerManaged: touched.noLongerManaged.filter((c) => options.tenants!.includes(c.tenant)),
    };
  }
  return createPlan(sets, knownOf(options), {
    createdAt: CREATED_AT,
    source: options.base ? BASE_SOURCE : SOURCE,
    collections: CONFIG.collections,
    ...(touched ? { touched } : {}),
  });
}

/** What planByTenant reads for a case. */
function inputOf(options: Case): PlanByTenantInput {
  return {
    files: FILES,
    config: CONFIG,
    ...(options.tenants ? { tenants: options.tenants } : {}),
    targets: { targets: patterns(options.targets), excludes: patterns(options.excludes) },
    ...(options.base ? { base: BASE } : {}),
    createdAt: CREATED_AT,
    source: options.base ? BASE_SOURCE : SOURCE,
  };
}

/** What textPlan is told after the tenants, as the CLI tells it. */
function textEnd(options: Case, result: Awaited<ReturnType<typeof planByTenant>>) {
  return { source: options.base ? BASE_SOURCE : SOURCE, ...result.trailer, unknown: result.unknown };
}

async function streamed(options: Case) {
  const json = planJsonPieces();
  const wholeJson = planJsonPieces();
  let jsonText = '';
  let text = textPlanInMemory(options.base === true);
  // The same tenants collected whole (wholeTenant) and rendered as one piece each.
  let wholeJsonText = '';
  let wholeText = textPlanInMemory(options.base === true);
  const read: string[] = [];
  const result = await planByTenant(inputOf(options), {
    async readKnown(tenant) {
      read.push(tenant);
      return knownOf(options).get(tenant) ?? new Map();
    },
    sink: {
      start(header) {
        jsonText = json.header(header);
        text = textPlanInMemory(options.base === true);
        wholeJsonText = wholeJson.header(header);
        wholeText = textPlanInMemory(options.base === true);
      },
      tenant(tenant) {
        // As the CLI writes it: the JSON and the text's lines contract by contract.
        jsonText += json.tenantStart(tenant);
        const lines = text.tenant(tenant);
        const whole = wholeTenant(tenant, (planned) => {
          wholeJsonText += wholeJson.tenant(planned);
          const wholeLines = wholeText.tenant(tenant);
          for (const contract of planned.contracts) wholeLines.contract(contract);
        });
        return {
          contract(contract) {
            jsonText += json.contract(contract);
            lines.contract(contract);
            whole.contract(contract);
          },
          async end(counts) {
            jsonText += json.tenantEnd();
            await whole.end(counts);
          },
        };
      },
    },
  });
  jsonText += json.trailer(result.trailer);
  wholeJsonText += wholeJson.trailer(result.trailer);
  return { result, jsonText, text: text.text(textEnd(options, result)), wholeJsonText, wholeText: wholeText.text(textEnd(options, result)), read };
}

/**
 * The plan as the CLI writes a text plan alone (engine/output/plan-spools.ts, its bodies spooled to
 * files): contracts with nothing known and not touched handed on as themselves (`unknown`), rendered
 * from their desired fields; the others planned without a fingerprint (`known`).
 */
async function textOnly(options: Case) {
  let unknownSeen = 0;
  let knownSeen = 0;
  const spools = planSpools('text', { outFile: undefined, color: false });
  const result = await planByTenant(inputOf(options), {
    readKnown: async (tenant) => knownOf(options).get(tenant) ?? new Map(),
    sink: {
      start: (header) => spools.sink.start(header),
      tenant(tenant) {
        const inner = spools.sink.tenant(tenant);
        return {
          contract() {
            throw new Error('a text-only sink is handed contracts through unknown and known');
          },
          known(contract) {
            // Known, or touched by the change: its plan carries what the change did to its desired fields.
            if (contract.knownFrom === 'unknown') expect(contract.touched).toBe(true);
            expect(contract).not.toHaveProperty('knownFingerprint');
            knownSeen += 1;
            inner.known!(contract);
          },
          unknown(contract, touched) {
            expect(touched).not.toBe(true);
            unknownSeen += 1;
            inner.unknown!(contract, touched);
          },
          end: (counts) => inner.end(counts),
        };
      },
    },
  });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  try {
    await spools.writeTo(out, { source: options.base ? BASE_SOURCE : SOURCE, trailer: result.trailer, unknown: result.unknown });
  } finally {
    spools.discard();
  }
  return { result, unknownSeen, knownSeen, text: Buffer.concat(chunks).toString('utf8') };
}

describe('planByTenant', () => {
  it.each<[string, Case]>([
    ['every tenant', {}],
    ['--tenant', { tenants: ['globex', 'initech'] }],
    ['no tenant selected has contracts', { tenants: [] }],
    ['--target', { tenants: ['acme', 'globex'], targets: ['acme/1', 'acme/3'] }],
    ['--exclude with a glob', { excludes: ['globex/*', 'acme/2'] }],
    ['--base: touched marks and contracts no longer managed', { base: true }],
    ['--base and --tenant', { base: true, tenants: ['globex'] }],
    ['--base and nothing known: the touched contracts show what the change did to their desired fields', { base: true, nothingKnown: true }],
  ])('%s: writes what rendering the whole plan writes, byte for byte', async (_, options) => {
    const whole = wholePlan(options);

    const { result, jsonText, text, wholeJsonText, wholeText } = await streamed(options);

    expect(result.errors).toEqual([]);
    expect(result.targeting?.unmatchedTargets ?? []).toEqual([]);
    expect(jsonText).toBe(renderPlanJson(whole));
    expect(text).toBe(renderPlanText(whole));
    expect(wholeJsonText).toBe(jsonText);
    expect(wholeText).toBe(text);
    if (options.nothingKnown) expect(text).toContain('  ~ 1  tenant acme  contracts/acme/b.yaml:4  (known state unknown, 2 ops; this pull request changed)\n');
    // A text plan alone: its contracts with nothing known rendered from their fields, counted as their plans count.
    const alone = await textOnly(options);
    expect(alone.text).toBe(text);
    expect(alone.result).toEqual(result);
    const touchedUnknown = whole.tenants.flatMap((tenant) => tenant.contracts).filter((c) => c.knownFrom === 'unknown' && c.touched === true).length;
    expect(alone.unknownSeen).toBe(result.unknown - touchedUnknown);
    expect(alone.knownSeen).toBe(result.trailer.summary.contracts - result.unknown + touchedUnknown);
  });

  it('the cases above hold a removal: the text names it in its section, before the tenants (without a base) or after the own contracts (with one)', () => {
    const removal = '\nmembers removed (1 in 1 tenant; tenant · contract · member):\n  - globex · 7 · Company (Id 2, RelationType "Supplier")\n';

    const byTenant = renderPlanText(wholePlan({}));
    const pullRequest = renderPlanText(wholePlan({ base: true }));

    expect(byTenant.indexOf(removal)).toBeGreaterThan(0);
    expect(byTenant.indexOf(removal)).toBeLessThan(byTenant.indexOf('\ntenant acme: '));
    expect(pullRequest.indexOf(removal)).toBeGreaterThan(pullRequest.indexOf('\ncontracts this pull request changes ('));
    expect(pullRequest.indexOf(removal)).toBeLessThan(pullRequest.indexOf('\nother contracts with changes ('));
  });

  it('with a base and nothing known: each touched contract carries what the change did to its desired fields, as the document plan does', async () => {
    const json = planJsonPieces();
    let written = '';
    const desired = validateDesiredState(FILES, CONFIG);
    const whole = createPlan(desired.contractSets, new Map(), {
      createdAt: CREATED_AT,
      source: BASE_SOURCE,
      collections: CONFIG.collections,
      touched: findTouchedContracts(desired.contractSets, BASE.baseContractSets, BASE.changedPaths),
    });

    const result = await planByTenant(inputOf({ base: true }), {
      readKnown: async () => new Map(),
      sink: {
        start: (header) => void (written = json.header(header)),
        tenant: (tenant) => wholeTenant(tenant, (planned) => void (written += json.tenant(planned))),
      },
    });
    written += json.trailer(result.trailer);

    expect(written).toBe(renderPlanJson(whole));
    const acme = whole.tenants.find((tenant) => tenant.tenant === 'acme')!;
    expect(acme.contracts.find((contract) => contract.id === '1')?.desiredChanges).toEqual([
      { field: 'Comment', before: null, after: 'ü ✓' },
      { field: 'Name', before: null, after: 'One' },
    ]);
  });

  it('reads the known state of the tenants it plans only', async () => {
    const { read } = await streamed({ tenants: ['acme', 'globex'], targets: ['globex/8'] });

    expect(read).toEqual(['globex']);
  });

  it('reports the targets that match no declared contract, in the order given', async () => {
    const { result } = await streamed({ targets: ['initech/404', 'acme/1', 'acme/404', 'umbrella/1'] });

    expect(result.targeting?.unmatchedTargets).toEqual(['initech/404', 'acme/404', 'umbrella/1']);
  });

  it('with errors in the desired state: the diagnostics, and no tenant planned after the first error', async () => {
    const files = [file('contracts/a.yaml', 'tenant: acme\ncontracts:\n  "1": { Name: 1 }\n'), ...FILES];
    const written: string[] = [];

    const result = await planByTenant(
      { files, config: CONFIG, createdAt: CREATED_AT, source: SOURCE },
      { readKnown: async () => new Map(), sink: { start() {}, tenant: (tenant) => wholeTenant(tenant, () => void written.push(tenant)) } },
    );

    expect(result.errors.map((d) => `${d.file}:${d.line}`)).toEqual(['contracts/a.yaml:3']);
    expect(written).toEqual([]);
  });
});
