import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, checkPlan, createPlan, diffContract, fingerprint, parsePlan, renderPlanJson, type PlanDocument } from '../../engine/index.ts';
import { planContract, planContractText, planUnknownContract } from '../../engine/plan/plan-contract.ts';
import { diffCase } from './arbitraries.ts';
import { BASE_SOURCE, CREATED_AT, desiredSets, KNOWN_4711, knownState, SOURCE, TOUCHED } from './fixtures.ts';

function plan(): PlanDocument {
  return createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: SOURCE });
}

function contractOf(document: PlanDocument, tenant: string, id: string) {
  return document.tenants.find((t) => t.tenant === tenant)!.contracts.find((c) => c.id === id)!;
}

describe('planContractText', () => {
  it('is planContract without the known state fingerprint, for any known and desired state, touched or not', () => {
    fc.assert(
      fc.property(diffCase, fc.constantFrom(undefined, true, false), ({ known, desired, collections }, touched) => {
        const contract = { id: 'C-1', file: 'contracts/a.yaml', line: 4, column: 3, fields: desired };
        const knownContracts = new Map(known === undefined ? [] : [['C-1', { fields: known, from: 'state' as const }]]);
        const touchedIds = touched === undefined ? undefined : new Set(touched ? ['C-1'] : []);
        const { knownFingerprint, ...rest } = planContract(contract, knownContracts, touchedIds, { collections });

        expect(knownFingerprint).toMatch(/^sha256:/);
        expect(planContractText(contract, knownContracts, touchedIds, { collections })).toEqual(rest);
      }),
      { numRuns: 500 },
    );
  });

  it('planUnknownContract (the one pass for nothing known) is the general way, byte for byte in JSON, for any desired state, touched or not', () => {
    fc.assert(
      fc.property(diffCase, fc.constantFrom(undefined, true, false), ({ desired, collections }, touched) => {
        const contract = { id: 'C-1', file: 'contracts/a.yaml', line: 4, column: 3, fields: desired };
        const touchedIds = touched === undefined ? undefined : new Set(touched ? ['C-1'] : []);
        // The general way, as planContract put it together before it had the one pass.
        const { ops, changes, ...head } = planContractText(contract, undefined, touchedIds, { collections });
        const general = { ...head, knownFingerprint: fingerprint(undefined), ops, changes };

        const planned = planUnknownContract(contract, touchedIds);
        expect(planned).toEqual(general);
        expect(JSON.stringify(planned)).toBe(JSON.stringify(general));
        expect(JSON.stringify(planContract(contract, new Map(), touchedIds, { collections }))).toBe(JSON.stringify(general));
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves planContract's keys in the plan document's order (the JSON plan's bytes)", () => {
    const contract = { id: 'C-1', file: 'contracts/a.yaml', line: 4, column: 3, fields: { Name: 'Acme' } };
    expect(Object.keys(planContract(contract, undefined, new Set(['C-1']), {}))).toEqual([
      'id',
      'file',
      'line',
      'action',
      'touched',
      'knownFrom',
      'knownFingerprint',
      'ops',
      'changes',
    ]);
  });
});

describe('createPlan', () => {
  it('validates against specs/plan.schema.json and reads back unchanged', () => {
    const document = plan();

    expect(checkPlan(document)).toEqual([]);
    expect(parsePlan(renderPlanJson(document))).toEqual(document);
  });

  it('is deterministic: the same input in any order gives byte-identical JSON', () => {
    const sets = desiredSets();
    const shuffled = [...sets].reverse().map((set) => ({ ...set, contracts: [...set.contracts].reverse() }));
    const known = knownState();

    const a = renderPlanJson(createPlan(sets, known, { createdAt: CREATED_AT, source: SOURCE }));
    const b = renderPlanJson(createPlan(shuffled, known, { createdAt: CREATED_AT, source: SOURCE }));

    expect(b).toBe(a);
  });

  it('orders tenants by name and contracts by file and line', () => {
    const document = plan();

    expect(document.tenants.map((t) => [t.tenant, t.contracts.map((c) => `${c.file}:${c.line} ${c.id}`)])).toEqual([
      ['acme', ['contracts/acme/facilities.yaml:3 4711', 'contracts/acme/facilities.yaml:13 4712', 'contracts/acme/it.yaml:3 5001']],
      ['globex', ['contracts/globex/leases.yaml:3 L-1']],
    ]);
  });

  it('records the ops of diffContract, the action, knownFrom and the summary', () => {
    const document = plan();

    const c4711 = contractOf(document, 'acme', '4711');
    expect(c4711.ops).toEqual(diffContract(KNOWN_4711, desiredSets()[0]!.contracts[0]!.fields));
    expect(c4711.ops.map((op) => `${op.op} ${op.path}`)).toEqual([
      'Replace /Contract/Name',
      'Replace /Contract/ValidTo',
      'Remove /Contract/Company',
      'Remove /Contract/OrganizationalUnit',
      'Add /Contract/OrganizationalUnit',
    ]);
    expect([c4711.action, c4711.knownFrom]).toEqual(['update', 'state']);
    expect([contractOf(document, 'acme', '4712').action, contractOf(document, 'acme', '4712').ops]).toEqual(['noop', []]);
    expect(contractOf(document, 'acme', '5001').knownFrom).toBe('unknown');
    expect(contractOf(document, 'globex', 'L-1')).toMatchObject({ action: 'noop', knownFrom: 'live' });
    expect(document.summary).toEqual({ tenants: 2, contracts: 4, changed: 2, ops: 5 + 3 });
  });

  it('describes changes for people: scalars, a removed member, a changed member, unknown state', () => {
    const document = plan();

    expect(contractOf(document, 'acme', '4711').changes).toEqual([
      { field: 'Name', before: 'Facility cleaning 2026', after: 'Facility cleaning 2027' },
      { field: 'ValidTo', before: '2026-12-31T23:59:59Z', after: '2027-12-31T23:59:59Z' },
      { field: 'Company', before: { Id: 19, RelationType: 'Client' }, after: null },
      { field: 'OrganizationalUnit', before: { Id: 3, Name: 'FM' }, after: { Id: 3, Name: 'Facility Management' } },
    ]);
    expect(contractOf(document, 'acme', '5001').changes.map((change) => [change.field, change.before])).toEqual([
      ['Comment', null],
      ['Name', null],
      ['Owner', null],
    ]);
  });

  it('fingerprints the known state: key order does not matter, content does, unknown is the fingerprint of null', () => {
    const document = plan();
    const reordered = Object.fromEntries(Object.entries(structuredClone(KNOWN_4711)).reverse());

    expect(contractOf(document, 'acme', '4711').knownFingerprint).toBe(fingerprint(reordered));
    expect(fingerprint({ ...KNOWN_4711, Name: 'other' })).not.toBe(fingerprint(KNOWN_4711));
    expect(contractOf(document, 'acme', '5001').knownFingerprint).toBe(fingerprint(null));
    expect(fingerprint(null)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(canonicalJson({ b: [1, { d: 1, c: undefined, a: -0 }], a: 'x' })).toBe('{"a":"x","b":[1,{"a":0,"d":1}]}');
  });

  it('without a base, records no touched marking at all', () => {
    const document = plan();

    expect(document.tenants.flatMap((t) => t.contracts).some((c) => 'touched' in c)).toBe(false);
    expect('noLongerManaged' in document || 'touched' in document.summary || 'base' in document.source).toBe(false);
  });

  it('with a base, marks every contract touched or not, lists those no longer managed, and reads back', () => {
    const document = createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, source: BASE_SOURCE, touched: TOUCHED });

    expect(document.tenants.flatMap((t) => t.contracts.map((c) => [c.id, c.touched]))).toEqual([
      ['4711', true],
      ['4712', true],
      ['5001', false],
      ['L-1', false],
    ]);
    expect(document.noLongerManaged).toEqual(TOUCHED.noLongerManaged);
    expect(document.summary).toEqual({ tenants: 2, contracts: 4, changed: 2, ops: 8, touched: 2, noLongerManaged: 1 });
    expect(document.source).toEqual(BASE_SOURCE);
    expect(checkPlan(document)).toEqual([]);
    expect(parsePlan(renderPlanJson(document))).toEqual(document);
  });

  it.each([
    ['a marking without a base', { source: SOURCE, touched: TOUCHED }],
    ['a base without a marking', { source: BASE_SOURCE }],
  ])('refuses %s', (_name, options) => {
    expect(() => createPlan(desiredSets(), knownState(), { createdAt: CREATED_AT, ...options })).toThrow(
      /options\.touched and options\.source\.base go together/,
    );
  });

  it('refuses a createdAt that is not a UTC timestamp', () => {
    expect(() => createPlan([], new Map(), { createdAt: 'now', source: SOURCE })).toThrow(/options\.createdAt/);
  });

  it('for generated contracts, every plan validates and records exactly the diff', () => {
    fc.assert(
      fc.property(diffCase, (input) => {
        const known = input.known ? new Map([['t', new Map([['1', { fields: input.known, from: 'state' as const }]])]]) : new Map();
        const sets = [{ tenant: 't', file: 'c.yaml', contracts: [{ id: '1', line: 3, column: 3, fields: input.desired }] }];

        const document = createPlan(sets, known, { createdAt: CREATED_AT, source: SOURCE, collections: input.collections });

        expect(checkPlan(JSON.parse(renderPlanJson(document)))).toEqual([]);
        expect(document.tenants[0]!.contracts[0]!.ops).toEqual(diffContract(input.known, input.desired, input));
      }),
      { numRuns: 300 },
    );
  });
});

describe('parsePlan', () => {
  it.each([
    ['a version it does not know', { ...plan(), version: 2 }, 'plan-version'],
    ['no version', { tenants: [] }, 'plan-version'],
    [
      'an op the service refuses',
      {
        ...plan(),
        tenants: [{ tenant: 'acme', contracts: [{ ...contractOf(plan(), 'acme', '4711'), ops: [{ op: 'Replace', path: '/Contract/Company', value: [] }] }] }],
      },
      'plan-invalid',
    ],
    [
      'an update without ops',
      { ...plan(), tenants: [{ tenant: 'acme', contracts: [{ ...contractOf(plan(), 'acme', '4711'), ops: [], changes: [] }] }] },
      'plan-invalid',
    ],
  ])('refuses %s', (_name, document, code) => {
    expect(() => parsePlan(JSON.stringify(document))).toThrow(expect.objectContaining({ code }));
  });
});
