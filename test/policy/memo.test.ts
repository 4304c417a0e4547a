/**
 * engine/policy/memo.ts: an evaluation answered from what the same field values gave before finds
 * exactly what running it finds. A property over contracts whose values repeat (as a repository's
 * do), with the values CEL tells apart and a key could confuse (-0 and 0, an absent field and a
 * null, a map's keys in another order, a string that looks like a number), and rules that read
 * only fields, read `id`, read a contract whole, fail closed, or go over the cost bound (which
 * depends on the longest list among the fields a rule reads).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/parse.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { compilePolicies } from '../../engine/policy/compile.ts';
import { evaluateChangePolicies, evaluateContractPolicies } from '../../engine/policy/evaluate.ts';
import { KEY_VALUES_HELD, keyValues, MEMO_ENTRIES, memoKey, valueNumber, type FieldKeys } from '../../engine/policy/memo.ts';
import type { EvaluationMemo } from '../../engine/policy/types.ts';
import type { CompiledPolicies } from '../../engine/policy/types.ts';

const CONFIG = `api: { baseUrl: https://cms.example.com }
auth: { url: https://login.example.com, realm: cms }
tenants:
  acme: { clientId: c, clientSecret: { env: ACME_SECRET } }
policies:
  - name: dora-types-need-eba-code
    on: contract
    matchConditions:
      - name: has-types
        expression: has(object.Type)
    variables:
      - name: missing
        expression: object.Type.filter(t, t.IsDora && (!has(t.EbaCode) || t.EbaCode == null || t.EbaCode == "")).map(t, t.Lookup)
    validations:
      - expression: size(variables.missing) == 0
        messageExpression: '"DORA types without an EbaCode: " + variables.missing.join(", ")'
    action: deny
  - name: dates-in-order
    on: contract
    matchConditions:
      - name: has-both
        expression: has(object.ValidFrom) && has(object.ValidTo)
    validations:
      - expression: timestamp(object.ValidTo) >= timestamp(object.ValidFrom)
        messageExpression: '"ValidTo " + object.ValidTo + " is before ValidFrom " + object.ValidFrom'
    action: warn
  - name: amount-sign
    on: contract
    matchConditions:
      - name: has-amount
        expression: has(object.AnnualExpensesAmount)
    validations:
      - expression: 1.0 / object.AnnualExpensesAmount > 0.0
        messageExpression: '"amount " + string(object.AnnualExpensesAmount)'
    action: warn
  - name: dora-owner
    on: contract
    matchConditions:
      - name: is-dora
        expression: has(object.Type) && object.Type.exists(t, t.IsDora)
    validations:
      - expression: has(object.Owner) && size(object.Owner) > 0
        messageExpression: '"contract " + id + " has no owner"'
    action: deny
  - name: first-key
    on: contract
    matchConditions:
      - name: has-units
        expression: has(object.OrganizationalUnit)
    validations:
      - expression: object.OrganizationalUnit.all(u, u.map(k, k)[0] != "Name")
        message: a unit whose first key is its name
    action: warn
  - name: whole
    on: contract
    validations:
      - expression: size(object) < 4
        message: many fields
    action: warn
  - name: types-deep
    on: contract
    validations:
      - expression: object.Type.all(a, object.Type.all(b, object.Type.all(c, a.IsDora || !b.IsDora || c.IsDora)))
        message: a DORA type beside others
    action: warn
  - name: dora-responsible
    on: contract
    matchConditions:
      - name: is-dora
        expression: has(object.Type) && object.Type.exists(t, t.IsDora)
    validations:
      - expression: has(object.Owner) && object.Owner.exists(o, o.OwnerType.Name == "Responsible")
        message: a DORA contract without a Responsible owner
    action: deny
  - name: first-type-dora
    on: contract
    matchConditions:
      - name: first-is-dora
        expression: object.Type[0].IsDora
    validations:
      - expression: object.ValidTo != ""
        message: never false
    action: warn
  - name: owners-through-a-variable
    on: contract
    matchConditions:
      - name: has-owner-or-types
        expression: has(object.Owner) || has(object.Type)
    variables:
      - name: owners
        expression: "has(object.Owner) ? object.Owner : []"
      - name: named
        expression: variables.owners.map(o, has(o.User))
    validations:
      - expression: variables.owners.exists(o, o.OwnerType.Name == "Responsible") || (size(variables.named) > 1 && variables.named.all(u, u))
        messageExpression: '"contract " + id + " of " + tenant + " has no Responsible owner"'
    action: warn
  - name: many-units
    on: contract
    validations:
      - expression: object.OrganizationalUnit.all(a, object.OrganizationalUnit.all(b, object.OrganizationalUnit.all(c, a.Id + b.Id + c.Id >= 0)))
        message: never false
    action: warn
`;

function compiled(on: 'contract' | 'change' = 'contract'): CompiledPolicies {
  const { config, diagnostics } = parseConfig('contract-sync.yaml', CONFIG.replaceAll('on: contract', `on: ${on}`));
  expect(diagnostics).toEqual([]);
  const result = compilePolicies('contract-sync.yaml', config!);
  expect(result.diagnostics).toEqual([]);
  return result.policies!;
}

const TODAY = { today: '2027-01-15' };
const RENAME = { op: 'Replace', path: '/Contract/Name', value: 'renamed' } as const;

const type = fc.record(
  { Lookup: fc.constantFrom('ICT', 'Lease', '1'), IsDora: fc.boolean(), EbaCode: fc.constantFrom(null, '', 'S05') },
  { requiredKeys: ['Lookup', 'IsDora'] },
);
const unit = fc.oneof(
  fc.record({ Id: fc.integer({ min: 1, max: 3 }), Name: fc.constantFrom('A', 'B') }),
  // The same members with their keys in the other order: a comprehension over a map follows them.
  fc.record({ Name: fc.constantFrom('A', 'B'), Id: fc.integer({ min: 1, max: 3 }) }),
  fc.constant({ Name: 'A' }),
);
// Owners whose people differ and whose types repeat: a rule that reads only the types keys them by those.
const owner = fc.constantFrom(
  { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 1, Email: 'a@example.com' } },
  { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 2 } },
  { OwnerType: { Name: 'Informed', Value: 2 }, User: { Id: 1, Email: 'a@example.com' } },
  { OwnerType: { Name: 'Informed', Value: 2 }, User: {} },
  { OwnerType: null, User: { Id: 3 } },
  { User: { Id: 2 } },
);
const contractFields = fc.record(
  {
    Type: fc.array(type, { maxLength: 2 }),
    ValidFrom: fc.constantFrom('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'not a date'),
    ValidTo: fc.constantFrom('2026-12-31T23:59:59Z', '2026-01-01T00:00:00Z'),
    AnnualExpensesAmount: fc.constantFrom(0, -0, 1.5, 100),
    Owner: fc.oneof(
      fc.array(owner, { maxLength: 2 }),
      // Not what the table says: CEL's answer (an error) depends on what it is.
      fc.constantFrom('Responsible', [null], [{ OwnerType: 'Responsible' }], { OwnerType: { Name: 'Responsible' } }),
    ),
    // Up to 70 units: three comprehensions over them go over the cost bound.
    OrganizationalUnit: fc.oneof(fc.array(unit, { maxLength: 3 }), fc.array(unit, { minLength: 60, maxLength: 70 })),
  },
  { requiredKeys: [] },
);

describe('the evaluation memo', () => {
  it('finds what running every rule on every contract finds', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('1', '2', '3'), contractFields), { minLength: 10, maxLength: 30 }), (contracts) => {
        const warm = compiled();
        const changes = compiled('change');

        for (const [id, object] of contracts) {
          const contract = { tenant: 'acme', id, object: object as ContractFields, file: 'contracts/a.yaml', line: 3 };
          // A config compiled for this contract alone has held nothing: every rule runs.
          const found = evaluateContractPolicies(warm, contract, TODAY);
          expect(found).toEqual(evaluateContractPolicies(compiled(), contract, TODAY));
          // As on: change rules, which are never held and see the whole contract: the same findings.
          expect(found).toEqual(evaluateChangePolicies(changes, { ...contract, oldObject: null, knownFrom: 'unknown', ops: [RENAME] }, TODAY));
        }
      }),
      { numRuns: 40 },
    );
  });

  it('holds rules that read only fields, and neither those that read id nor those that read a contract whole', () => {
    const policies = compiled();

    // A field read in parts is marked so; a rule whose messages read id holds only that it found nothing.
    function fieldsOf(memo: EvaluationMemo<unknown> | undefined): string[] | undefined {
      return memo?.fields.map((field, index) => (memo.parts[index] === undefined ? field : `${field} (parts)`));
    }
    const memos = Object.fromEntries(
      policies.policies.map((policy) => [
        policy.name,
        [fieldsOf(policy.memo), policy.memo?.findingsAgain === true, policy.matchConditions.map((c) => fieldsOf(c.memo))],
      ]),
    );

    expect(memos).toEqual({
      // has(object.Type) reads only that the types are there; the rule reads each type whole (filter keeps them): all of it.
      'dora-types-need-eba-code': [['Type'], false, [['Type (parts)']]],
      'dates-in-order': [['ValidFrom', 'ValidTo'], false, [['ValidFrom (parts)', 'ValidTo (parts)']]],
      'amount-sign': [['AnnualExpensesAmount'], false, [['AnnualExpensesAmount (parts)']]],
      // size() reads the owners whole; the types are read in parts (IsDora of each).
      'dora-owner': [['Owner', 'Type (parts)'], true, [['Type (parts)']]],
      // Each unit is iterated as a map (its keys, in their order): read whole, as the list is.
      'first-key': [['OrganizationalUnit'], false, [['OrganizationalUnit (parts)']]],
      whole: [undefined, false, []],
      'types-deep': [['Type (parts)'], false, []],
      // A condition that reads fewer fields than its rule, or some in parts, has a memo of its own, asked first.
      'dora-responsible': [['Owner (parts)', 'Type (parts)'], false, [['Type (parts)']]],
      'first-type-dora': [['Type', 'ValidTo'], false, [['Type']]],
      // Read through its variables: the owners' types, and whether they have a user.
      'owners-through-a-variable': [['Owner (parts)', 'Type (parts)'], true, [['Owner (parts)', 'Type (parts)']]],
      'many-units': [['OrganizationalUnit (parts)'], false, []],
    });
  });

  it("keys a field read in parts by those parts: other people of the same owner types find the rule's answer again, another type does not", () => {
    const policies = compiled();
    const rule = policies.policies.find((policy) => policy.name === 'dora-responsible')!;
    const Type = [{ Lookup: 'ICT', IsDora: true }];
    function found(...owners: object[]): string[] {
      return evaluateContractPolicies(policies, { tenant: 'acme', id: '1', object: { Type, Owner: owners } as ContractFields }, TODAY)
        .map((finding) => finding.check)
        .filter((check) => check === 'dora-responsible');
    }

    expect(found({ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 1 } })).toEqual([]);
    expect(found({ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 2, Email: 'b@example.com' } })).toEqual([]);
    expect(rule.memo!.results.size).toBe(1);
    expect(found({ OwnerType: { Name: 'Informed', Value: 1 }, User: { Id: 1 } })).toEqual(['dora-responsible']);
    // A second owner is another key (the list is longer), and so is an owner without a type (CEL's answer is an error).
    expect(found({ OwnerType: { Name: 'Informed', Value: 1 } }, { OwnerType: { Name: 'Responsible', Value: 1 } })).toEqual([]);
    expect(found({ User: { Id: 1 } })).toEqual(['dora-responsible']);
    expect(rule.memo!.results.size).toBe(4);
  });

  it('rests a memo whose keys are not found (a date of its own on every contract), and finds the same', () => {
    const warm = compiled();
    const dates = compiled().policies.find((policy) => policy.name === 'dates-in-order')!;
    const contracts = Array.from({ length: MEMO_ENTRIES * 2 + 10 }, (_, index) => ({
      tenant: 'acme',
      id: '1',
      // A minute apart, from 2026-01-01: ValidTo falls before the later ones' ValidFrom.
      object: { ValidFrom: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString().replace('.000', ''), ValidTo: '2026-01-04T00:00:00Z' },
    }));
    // Every 97th contract and the last ones (the memo resting by then), against a config that has held nothing.
    const sample = contracts.filter((_, index) => index % 97 === 0 || index >= contracts.length - 5);

    const found = contracts.map((contract) => evaluateContractPolicies(warm, contract, TODAY));
    const resting = warm.policies.find((policy) => policy.name === 'dates-in-order')!.memo!.resting;

    expect(resting).toBeGreaterThan(0);
    expect(sample.map((contract) => found[contracts.indexOf(contract)])).toEqual(
      sample.map((contract) => evaluateContractPolicies(compiled(), contract, TODAY)),
    );
    expect(found.at(-1)!.map((finding) => finding.check)).toContain('dates-in-order');
    expect(dates.memo!.resting).toBe(0);
  });

  it.each([
    [0, -0],
    [null, undefined],
    ['1', 1],
    [
      { a: 1, b: 2 },
      { b: 2, a: 1 },
    ],
    [
      [1, 2],
      [2, 1],
    ],
    [Number.NaN, null],
    [true, 't'],
    [1, 2n],
    [[], {}],
    [[1], [[1]]],
    [{ a: 1 }, { a: 1, b: 2 }],
    [[{ a: 1 }], [{ a: 1 }, { a: 1 }]],
    [
      { a: 1, b: undefined },
      { a: 1, b: null },
    ],
  ])('tells %o from %o', (a, b) => {
    const values = keyValues();
    expect(valueNumber(values, a)).not.toBe(valueNumber(values, b));
    // ... and knows each again, however it was made.
    expect(valueNumber(values, structuredClone(a))).toBe(valueNumber(values, a));
  });

  it('numbers a value the same wherever it is read', () => {
    const values = keyValues();
    const types = [{ Lookup: 'Service', EbaCode: null, IsDora: true }];
    expect(valueNumber(values, [{ Lookup: 'Service', EbaCode: null, IsDora: true }])).toBe(valueNumber(values, types));
    expect(valueNumber(values, { a: 1, b: undefined })).toBe(valueNumber(values, { a: 1 }));
    expect(valueNumber(values, Number.NaN)).toBe(valueNumber(values, Number.NaN));
    expect(valueNumber(values, 1n)).not.toBe(valueNumber(values, 1));
  });

  it('numbers values anew when it starts over, so that a key made before never matches one made after', () => {
    const values = keyValues();
    const memo: EvaluationMemo<unknown> = {
      fields: ['Name', 'ValidTo'],
      parts: [undefined, undefined],
      measured: false,
      results: new Map(),
      asked: 0,
      resting: 0,
    };
    function keyOf(Name: string): string {
      return <string>memoKey(memo, {
        fields: { Name, ValidTo: '2027-01-01T00:00:00Z' },
        values,
        made: new Map(),
        madeParts: new Map(),
        longestOf: () => 0,
      } satisfies FieldKeys)!;
    }
    const before = new Set(Array.from({ length: KEY_VALUES_HELD - 1 }, (_, index) => keyOf(`contract ${index}`)));
    expect(before.size).toBe(KEY_VALUES_HELD - 1);
    expect(keyOf('contract 7')).toBe(keyOf('contract 7'));

    // Full (the names and the one date make KEY_VALUES_HELD values): the next new value starts it over.
    const after = [keyOf('a new name'), keyOf('contract 7'), keyOf('contract 8')];

    // Started over: the new name, the date and the two names numbered again.
    expect(values.held).toBe(4);
    for (const key of after) expect(before).not.toContain(key);
    expect(new Set(after).size).toBe(3);
  });

  it('holds nothing for a value it cannot tell apart from others', () => {
    const values = keyValues();
    expect(valueNumber(values, new Date(0))).toBeUndefined();
    expect(valueNumber(values, [new Map()])).toBeUndefined();
    expect(valueNumber(values, { at: () => 1 })).toBeUndefined();
  });
});
