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
import { KEY_VALUES_HELD, keyValues, MEMO_ENTRIES, memoKey, valueKey, type FieldKeys } from '../../engine/policy/memo.ts';
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
const contractFields = fc.record(
  {
    Type: fc.array(type, { maxLength: 2 }),
    ValidFrom: fc.constantFrom('2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z', 'not a date'),
    ValidTo: fc.constantFrom('2026-12-31T23:59:59Z', '2026-01-01T00:00:00Z'),
    AnnualExpensesAmount: fc.constantFrom(0, -0, 1.5, 100),
    Owner: fc.constantFrom([], [{ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7 } }]),
    // Up to 70 units: three comprehensions over them go over the cost bound.
    OrganizationalUnit: fc.oneof(fc.array(unit, { maxLength: 3 }), fc.array(unit, { minLength: 60, maxLength: 70 })),
  },
  { requiredKeys: [] },
);

describe('the evaluation memo', () => {
  it('finds what running every rule on every contract finds', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('1', '2', '3'), contractFields), { minLength: 1, maxLength: 30 }), (contracts) => {
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

    const memos = Object.fromEntries(
      policies.policies.map((policy) => [policy.name, [policy.memo?.fields, policy.matchConditions.map((c) => c.memo?.fields)]]),
    );

    expect(memos).toEqual({
      'dora-types-need-eba-code': [['Type'], [undefined]],
      'dates-in-order': [['ValidFrom', 'ValidTo'], [undefined]],
      'amount-sign': [['AnnualExpensesAmount'], [undefined]],
      'dora-owner': [undefined, [['Type']]],
      'first-key': [['OrganizationalUnit'], [undefined]],
      whole: [undefined, []],
      'types-deep': [['Type'], []],
      // A condition that reads fewer fields than its rule has a memo of its own, asked first.
      'dora-responsible': [['Owner', 'Type'], [['Type']]],
      'first-type-dora': [['Type', 'ValidTo'], [['Type']]],
      'many-units': [['OrganizationalUnit'], []],
    });
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
  ])('tells %j from %j', (a, b) => {
    expect(valueKey(a)).not.toBe(valueKey(b));
  });

  it('numbers values anew when it starts over, so that a key made before never matches one made after', () => {
    const values = keyValues();
    const memo: EvaluationMemo<unknown> = { fields: ['Name', 'ValidTo'], results: new Map(), asked: 0, resting: 0 };
    function keyOf(Name: string): string {
      return memoKey(memo, { fields: { Name, ValidTo: '2027-01-01T00:00:00Z' }, values, made: new Map() } satisfies FieldKeys)!;
    }
    const before = new Set(Array.from({ length: KEY_VALUES_HELD - 1 }, (_, index) => keyOf(`contract ${index}`)));
    expect(before.size).toBe(KEY_VALUES_HELD - 1);
    expect(keyOf('contract 7')).toBe(keyOf('contract 7'));

    // Full (the names and the one date make KEY_VALUES_HELD values): the next new value starts it over.
    const after = [keyOf('a new name'), keyOf('contract 7'), keyOf('contract 8')];

    // Started over: the new name, the date and the two names numbered again.
    expect(values.numbers.size).toBe(4);
    for (const key of after) expect(before).not.toContain(key);
    expect(new Set(after).size).toBe(3);
  });

  it('holds nothing for a value it cannot tell apart from others', () => {
    expect(valueKey(new Date(0))).toBeUndefined();
    expect(valueKey([new Map()])).toBeUndefined();
    expect(valueKey({ at: () => 1 })).toBeUndefined();
  });
});
