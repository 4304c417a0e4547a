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
import {
  renderPlanText,
  renderPlanTextContract,
  renderPlanTextHead,
  renderPlanTextTail,
  renderPlanTextTenant,
  renderPlanTextTenantHead,
  renderUnknownContractText,
} from '../../engine/plan/render-text.ts';
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
  ['globex', new Map<string, KnownContract>([['8', { fields: { Name: 'Old' }, from: 'state' }]])],
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
  return createPlan(sets, KNOWN, {
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

async function streamed(options: Case) {
  const json = planJsonPieces();
  const wholeJson = planJsonPieces();
  let jsonText = '';
  let tenantsText = '';
  // The same tenants collected whole (wholeTenant) and rendered as one piece each.
  let wholeJsonText = '';
  let wholeTenantsText = '';
  const read: string[] = [];
  const result = await planByTenant(inputOf(options), {
    async readKnown(tenant) {
      read.push(tenant);
      return KNOWN.get(tenant) ?? new Map();
    },
    sink: {
      start(header) {
        jsonText = json.header(header);
        tenantsText = '';
        wholeJsonText = wholeJson.header(header);
        wholeTenantsText = '';
      },
      tenant(tenant) {
        // As the CLI writes it: the JSON contract by contract, the text's head after the tenant's last contract.
        jsonText += json.tenantStart(tenant);
        let body = '';
        const whole = wholeTenant(tenant, (planned) => {
          wholeJsonText += wholeJson.tenant(planned);
          wholeTenantsText += renderPlanTextTenant(planned);
        });
        return {
          contract(contract) {
            jsonText += json.contract(contract);
            body += renderPlanTextContract(contract);
            whole.contract(contract);
          },
          async end(counts) {
            jsonText += json.tenantEnd();
            tenantsText += `${renderPlanTextTenantHead(tenant, counts)}${body}`;
            await whole.end(counts);
          },
        };
      },
    },
  });
  jsonText += json.trailer(result.trailer);
  wholeJsonText += wholeJson.trailer(result.trailer);
  const source = options.base ? BASE_SOURCE : SOURCE;
  const head = renderPlanTextHead({ source, ...result.trailer });
  const tail = renderPlanTextTail(result.trailer.noLongerManaged ?? [], result.unknown);
  return { result, jsonText, text: `${head}${tenantsText}${tail}`, wholeJsonText, wholeText: `${head}${wholeTenantsText}${tail}`, read };
}

/** The plan as the CLI writes a text plan alone: contracts with nothing known handed on as themselves (`unknown`), rendered from their desired fields; the others planned without a fingerprint (`known`). */
async function textOnly(options: Case) {
  let tenantsText = '';
  let unknownSeen = 0;
  let knownSeen = 0;
  const result = await planByTenant(inputOf(options), {
    readKnown: async (tenant) => KNOWN.get(tenant) ?? new Map(),
    sink: {
      start() {
        tenantsText = '';
      },
      tenant(tenant) {
        let body = '';
        return {
          contract() {
            throw new Error('a text-only sink is handed contracts through unknown and known');
          },
          known(contract) {
            expect(contract.knownFrom).not.toBe('unknown');
            expect(contract).not.toHaveProperty('knownFingerprint');
            knownSeen += 1;
            body += renderPlanTextContract(contract);
          },
          unknown(contract, touched) {
            unknownSeen += 1;
            body += renderUnknownContractText(contract, touched);
          },
          end(counts) {
            tenantsText += `${renderPlanTextTenantHead(tenant, counts)}${body}`;
          },
        };
      },
    },
  });
  const head = renderPlanTextHead({ source: options.base ? BASE_SOURCE : SOURCE, ...result.trailer });
  return { result, unknownSeen, knownSeen, text: `${head}${tenantsText}${renderPlanTextTail(result.trailer.noLongerManaged ?? [], result.unknown)}` };
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
  ])('%s: writes what rendering the whole plan writes, byte for byte', async (_, options) => {
    const whole = wholePlan(options);

    const { result, jsonText, text, wholeJsonText, wholeText } = await streamed(options);

    expect(result.errors).toEqual([]);
    expect(result.targeting?.unmatchedTargets ?? []).toEqual([]);
    expect(jsonText).toBe(renderPlanJson(whole));
    expect(text).toBe(renderPlanText(whole));
    expect(wholeJsonText).toBe(jsonText);
    expect(wholeText).toBe(text);
    // A text plan alone: its contracts with nothing known rendered from their fields, counted as their plans count.
    const alone = await textOnly(options);
    expect(alone.text).toBe(text);
    expect(alone.result).toEqual(result);
    expect(alone.unknownSeen).toBe(result.unknown);
    expect(alone.knownSeen).toBe(result.trailer.summary.contracts - result.unknown);
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
