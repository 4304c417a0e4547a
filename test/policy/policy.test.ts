import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../engine/config/parse.ts';
import type { Config } from '../../engine/config/types.ts';
import type { ContractFields } from '../../engine/model/types.ts';
import { compilePolicies } from '../../engine/policy/compile.ts';
import type { CompiledPolicies } from '../../engine/policy/types.ts';
import { evaluateChangePolicies, evaluateContractPolicies } from '../../engine/policy/evaluate.ts';
import { utcDate } from '../../engine/policy/exceptions.ts';

const BASE = `api: { baseUrl: https://cms.example.com }
auth: { url: https://login.example.com, realm: cms }
tenants:
  acme: { clientId: c, clientSecret: { env: ACME_SECRET } }
`;

function configOf(yaml: string): { config?: Config; diagnostics: ReturnType<typeof parseConfig>['diagnostics'] } {
  return parseConfig('contract-sync.yaml', BASE + yaml);
}

function compiled(yaml: string): CompiledPolicies {
  const { config, diagnostics } = configOf(yaml);
  expect(diagnostics).toEqual([]);
  const result = compilePolicies('contract-sync.yaml', config!);
  expect(result.diagnostics).toEqual([]);
  return result.policies!;
}

function problems(yaml: string): string[] {
  const { config, diagnostics } = configOf(yaml);
  const all = config === undefined ? diagnostics : [...diagnostics, ...compilePolicies('contract-sync.yaml', config).diagnostics];
  return all.map((d) => `${d.line}:${d.column} ${d.field} ${d.message}`);
}

const TODAY = { today: '2027-01-15' };

const DORA_OWNER = `policies:
  - name: dora-needs-responsible-owner
    on: contract
    matchConditions:
      - name: is-dora
        expression: 'has(object.Type) && object.Type.exists(t, t.IsDora)'
    variables:
      - name: owners
        expression: 'has(object.Owner) ? object.Owner : []'
    validations:
      - expression: 'variables.owners.exists(o, o.OwnerType.Name == "Responsible")'
        message: a DORA contract needs a Responsible owner
        messageExpression: '"contract " + id + " has no Responsible owner"'
    action: deny
`;

const doraType = { Lookup: 'ict', IsDora: true, EbaCode: 'S01' };
const responsible = { OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: 7 } };

function contract(object: ContractFields, id = '4711') {
  return { tenant: 'acme', id, object, file: 'contracts/acme/a.yaml', line: 4 };
}

describe('policy rules: compile and evaluate', () => {
  it('finds a DORA contract without a Responsible owner, with the messageExpression, the file and the line', () => {
    const policies = compiled(DORA_OWNER);

    const findings = evaluateContractPolicies(policies, contract({ Type: [doraType], Owner: [] }), TODAY);

    expect(findings).toEqual([
      {
        check: 'dora-needs-responsible-owner',
        action: 'deny',
        tenant: 'acme',
        contractId: '4711',
        file: 'contracts/acme/a.yaml',
        line: 4,
        message: 'contract 4711 has no Responsible owner',
      },
    ]);
  });

  it.each([
    ['a contract that is not DORA (matchConditions false)', { Type: [{ ...doraType, IsDora: false }] }],
    ['a DORA contract with a Responsible owner', { Type: [doraType], Owner: [responsible] }],
    ['a contract without types', { Name: 'x' }],
  ])('finds nothing for %s', (_, object) => {
    const policies = compiled(DORA_OWNER);

    expect(evaluateContractPolicies(policies, contract(object as ContractFields), TODAY)).toEqual([]);
  });

  it('reads integers as CEL ints, amounts as doubles, timestamps as RFC 3339 strings and durations as maps', () => {
    const policies = compiled(`policies:
  - name: shapes
    on: contract
    validations:
      - expression: 'object.Area / 2 == 3'
      - expression: 'object.AnnualExpensesAmount * 1.25 > 100.0'
      - expression: 'timestamp(object.ValidFrom) < timestamp(object.ValidTo)'
      - expression: 'object.SupplierNoticePeriod.Days == 30'
      - expression: 'object.Owner[0].User.Id == 7'
    action: warn
`);
    const object = {
      Area: 7,
      AnnualExpensesAmount: 100,
      ValidFrom: '2027-01-01T00:00:00Z',
      ValidTo: '2028-01-01T00:00:00Z',
      SupplierNoticePeriod: { Days: 30 },
      Owner: [responsible],
    };

    expect(evaluateContractPolicies(policies, contract(object as ContractFields), TODAY)).toEqual([]);
  });

  it('falls back to message, saying so, when the messageExpression fails; without either it quotes the expression', () => {
    const policies = compiled(`policies:
  - name: names
    on: contract
    validations:
      - expression: 'has(object.Name)'
        message: a name is needed
        messageExpression: 'object.Name + "!"'
      - expression: 'has(object.Comment)'
    action: warn
`);

    const messages = evaluateContractPolicies(policies, contract({}), TODAY).map((finding) => finding.message);

    expect(messages).toEqual(['a name is needed (messageExpression failed: field not found: Name)', 'failed: has(object.Comment)']);
  });

  it('fails closed: a rule that fails on one contract is a finding of that rule carrying the error', () => {
    const policies = compiled(`policies:
  - name: needs-has
    on: contract
    validations:
      - expression: 'object.Name.size() > 3'
    action: warn
`);

    const findings = evaluateContractPolicies(policies, contract({ Area: 1 }), TODAY);

    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ check: 'needs-has', action: 'warn' });
    expect(findings[0]!.message).toMatch(/^evaluation error in policies\[0\]\.validations\[0\]\.expression: .*Name.* \(the rule fails closed\)$/);
  });

  it('fails closed on a validation that is not a bool, and on a failing matchCondition', () => {
    const policies = compiled(`policies:
  - name: not-bool
    on: contract
    matchConditions:
      - name: named
        expression: 'object.Name != ""'
    validations:
      - expression: 'object.Name'
    action: deny
`);

    const noName = evaluateContractPolicies(policies, contract({}), TODAY);
    const named = evaluateContractPolicies(policies, contract({ Name: 'x' }), TODAY);

    expect(noName[0]!.message).toContain('policies[0].matchConditions[0].expression');
    expect(named[0]!.message).toContain('expected a bool, got a string');
  });

  it('gives on: change rules oldObject, knownFrom and ops', () => {
    const policies = compiled(`policies:
  - name: expenses-rise
    on: change
    matchConditions:
      - name: known
        expression: 'oldObject != null && has(oldObject.AnnualExpensesAmount) && has(object.AnnualExpensesAmount)'
    validations:
      - expression: 'object.AnnualExpensesAmount <= oldObject.AnnualExpensesAmount * 1.25'
        messageExpression: '"AnnualExpensesAmount rises by more than a quarter (" + knownFrom + ", " + string(size(ops)) + " op)"'
    action: override
  - name: last-owner
    on: change
    validations:
      - expression: '!ops.exists(o, o.op == "Remove" && o.path == "/Contract/Owner" && o.value.User.Id == 7)'
    action: deny
`);
    const change = {
      ...contract({ AnnualExpensesAmount: 200 }),
      oldObject: { AnnualExpensesAmount: 100 },
      knownFrom: 'live' as const,
      ops: [
        { op: 'Replace' as const, path: '/Contract/AnnualExpensesAmount' as const, value: 200 },
        { op: 'Remove' as const, path: '/Contract/Owner' as const, value: responsible },
      ],
    };

    const findings = evaluateChangePolicies(policies, change, TODAY);

    expect(findings.map((finding) => [finding.check, finding.action, finding.message])).toEqual([
      ['expenses-rise', 'override', 'AnnualExpensesAmount rises by more than a quarter (live, 2 op)'],
      ['last-owner', 'deny', 'failed: !ops.exists(o, o.op == "Remove" && o.path == "/Contract/Owner" && o.value.User.Id == 7)'],
    ]);
    expect(evaluateContractPolicies(policies, change, TODAY)).toEqual([]);
    expect(evaluateChangePolicies(policies, { ...change, oldObject: null, knownFrom: 'unknown', ops: [] }, TODAY)).toEqual([]);
  });

  it('converts only the fields the rules select, and the whole contract for a rule that reads it otherwise', () => {
    const selecting = compiled(`policies:
  - name: named
    on: change
    validations:
      - expression: 'has(object.Name) && oldObject != null && oldObject.Area > 0'
    action: warn
`);
    const whole = compiled(`policies:
  - name: two-fields
    on: contract
    validations:
      - expression: 'size(object) == 2'
    action: warn
`);

    expect(selecting.reads).toEqual(new Set(['Name', 'Area']));
    expect(whole.reads).toBe('all');
    expect(evaluateContractPolicies(whole, contract({ Name: 'x', Area: 1 }), TODAY)).toEqual([]);
    expect(evaluateContractPolicies(whole, contract({ Name: 'x', Area: 1, Comment: 'c' }), TODAY)).toHaveLength(1);
  });

  it('bounds the cost of one evaluation: a rule that would run over it on a contract fails closed, naming itself, without running', () => {
    const policies = compiled(`policies:
  - name: owners-cubed
    on: contract
    validations:
      - expression: 'object.Owner.all(a, object.Owner.all(b, object.Owner.all(c, a.User.Id + b.User.Id + c.User.Id > 0)))'
    action: warn
`);
    function owners(n: number): ContractFields['Owner'] {
      return Array.from({ length: n }, (_, i) => ({ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: i + 1 } }));
    }

    const small = evaluateContractPolicies(policies, contract({ Owner: owners(10) }), TODAY);
    const large = evaluateContractPolicies(policies, contract({ Owner: owners(500) }), TODAY);

    expect(small).toEqual([]);
    expect(large).toHaveLength(1);
    expect(large[0]).toMatchObject({ check: 'owners-cubed', action: 'warn' });
    expect(large[0]!.message).toMatch(
      /^evaluation error in policies\[0\]\.validations\[0\]\.expression: evaluating it could cost [0-9.]+e\+\d+ steps on this contract \(lists of up to 500 items, comprehensions 3 deep\), over the bound of 2e\+5 \(the rule fails closed\)$/,
    );
  });

  it("counts in the bound the lists an expression reads: its own fields, or its rule's where it reads a variable", () => {
    const policies = compiled(`policies:
  - name: types-cubed
    on: contract
    validations:
      - expression: 'object.Type.all(a, object.Type.all(b, object.Type.all(c, a.IsDora || !b.IsDora || c.IsDora)))'
    action: warn
  - name: owners-through-a-variable
    on: contract
    variables:
      - name: owners
        expression: 'has(object.Owner) ? object.Owner : []'
    validations:
      - expression: 'variables.owners.all(a, variables.owners.all(b, variables.owners.all(c, a.User.Id + b.User.Id + c.User.Id > 0)))'
    action: warn
`);
    const owners = Array.from({ length: 500 }, (_, i) => ({ OwnerType: { Name: 'Responsible', Value: 1 }, User: { Id: i + 1 } }));

    const found = evaluateContractPolicies(policies, contract({ Type: [{ Lookup: 'ICT', IsDora: true }], Owner: owners }), TODAY);

    // 500 owners do not bound a rule over the types; they bound the one that reads them through its variable.
    expect(found.map((finding) => finding.check)).toEqual(['owners-through-a-variable']);
    expect(found[0]!.message).toMatch(/lists of up to 500 items, comprehensions 3 deep/);
  });

  it('marks a finding excepted before the expiry date and expired from that day on, whatever entry point', () => {
    const policies = compiled(`${DORA_OWNER}policyExceptions:
  - policy: dora-needs-responsible-owner
    contracts: ["acme/4711"]
    owner: jane@example.com
    reason: owner being appointed
    ticket: CMS-123
    expires: 2027-01-31
`);
    const object = { Type: [doraType] };

    const before = evaluateContractPolicies(policies, contract(object), { today: '2027-01-30' });
    const onTheDay = evaluateContractPolicies(policies, contract(object), { today: '2027-01-31' });
    const other = evaluateContractPolicies(policies, contract(object, '4712'), { today: '2027-01-30' });

    const exception = { owner: 'jane@example.com', reason: 'owner being appointed', ticket: 'CMS-123', expires: '2027-01-31' };
    expect(before[0]!.exception).toEqual({ state: 'excepted', ...exception });
    expect(onTheDay[0]!.exception).toEqual({ state: 'expired', ...exception });
    expect(other[0]!.exception).toBeUndefined();
  });

  it('judges expiry on the UTC date of the injected clock', () => {
    expect(utcDate(Date.UTC(2027, 0, 30, 23, 59, 59))).toBe('2027-01-30');
    expect(utcDate(Date.UTC(2027, 0, 31))).toBe('2027-01-31');
  });

  it('gives an on: change rule the findings of the same rule on: contract when it reads only the contract (property)', () => {
    function rule(on: string): string {
      return `policies:
  - name: rule
    on: ${on}
    matchConditions:
      - name: has-area
        expression: 'has(object.Area)'
    variables:
      - name: owners
        expression: 'has(object.Owner) ? object.Owner.size() : 0'
    validations:
      - expression: 'object.Area < 100'
        messageExpression: '"area " + string(object.Area) + " with " + string(variables.owners) + " owners"'
      - expression: 'has(object.Name) && object.Name.startsWith("A")'
    action: warn
`;
    }
    const onContract = compiled(rule('contract'));
    const onChange = compiled(rule('change'));
    const contracts = fc.record(
      { Area: fc.integer({ min: -1000, max: 1000 }), Name: fc.string({ maxLength: 5 }), Owner: fc.array(fc.constant(responsible), { maxLength: 3 }) },
      { requiredKeys: [] },
    );

    fc.assert(
      fc.property(contracts, fc.constantFrom('state', 'live', 'unknown') as fc.Arbitrary<'state' | 'live' | 'unknown'>, (object, knownFrom) => {
        const direct = evaluateContractPolicies(onContract, contract(object), TODAY);
        const asChange = evaluateChangePolicies(onChange, { ...contract(object), oldObject: null, knownFrom, ops: [] }, TODAY);

        expect(asChange).toEqual(direct);
        expect(evaluateContractPolicies(onContract, contract(object), TODAY)).toEqual(direct);
      }),
    );
  });
});

describe('policy rules: config errors', () => {
  it('reports a rule that does not compile at the expression position in the file', () => {
    expect(
      problems(`policies:
  - name: broken
    on: contract
    validations:
      - expression: 'object.Area >'
    action: deny
`),
    ).toEqual([expect.stringMatching(/^9:34 policies\[0\]\.validations\[0\]\.expression policy "broken": does not compile: /)]);
  });

  it('reports a field the contract table does not have, with did-you-mean, in a plain scalar and in a literal block', () => {
    expect(
      problems(`policies:
  - name: typo
    on: contract
    validations:
      - expression: object.Nmae == "x"
      - expression: |
          object.Owner.exists(o,
            o.OwnerType.Nmae == "Responsible")
    action: deny
`),
    ).toEqual([
      '9:28 policies[0].validations[0].expression policy "typo": the contract has no field "Nmae" (did you mean "Name"?)',
      '12:25 policies[0].validations[1].expression policy "typo": Owner[].OwnerType has no field "Nmae" (did you mean "Name"?)',
    ]);
  });

  it.each([
    ['a wrong type against a literal', `'object.Area > "x"'`, /object\.Area is an int; used with a string it is an error/],
    ['oldObject in an on: contract rule', `'oldObject == null'`, /oldObject is a variable of on: change rules only/],
    ['an unknown name', `'objet.Area > 1'`, /unknown name "objet" \(did you mean "object"\?\)/],
    ['a variable not defined', `'variables.owners.size() > 0'`, /no variable "owners" is defined before this expression/],
    ['comprehensions nested too deep', `'[1].all(a, [1].all(b, [1].all(c, [1].all(d, true))))'`, /nested more than 3 deep/],
  ])('refuses %s', (_, expression, message) => {
    const found = problems(`policies:
  - name: rule
    on: contract
    validations:
      - expression: ${expression}
    action: deny
`);

    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });

  it('refuses duplicate rule names, an exception for an unknown rule, an exception without expires and a malformed date', () => {
    const found = problems(`${DORA_OWNER}  - name: dora-needs-responsible-owner
    on: contract
    validations: [{ expression: 'true' }]
    action: warn
policyExceptions:
  - policy: dora-needs-responsible-ownr
    contracts: ["acme/4711"]
    owner: jane@example.com
    reason: r
    expires: 2027-01-31
`);
    const schema = problems(`${DORA_OWNER}policyExceptions:
  - policy: dora-needs-responsible-owner
    contracts: ["acme/4711"]
    owner: jane@example.com
    reason: r
  - policy: dora-needs-responsible-owner
    contracts: ["acme/4711"]
    owner: jane@example.com
    reason: r
    expires: 2027-02-30
`);

    expect(found).toEqual([
      '19:11 policies[1].name policy "dora-needs-responsible-owner" is defined twice; names are unique',
      '24:13 policyExceptions[0].policy no policy named "dora-needs-responsible-ownr" (did you mean "dora-needs-responsible-owner"?)',
    ]);
    expect(schema).toEqual([
      expect.stringMatching(/^20:5 policyExceptions\[0\] missing required field "expires"$/),
      expect.stringMatching(/^28:14 policyExceptions\[1\]\.expires expected a date like 2026-06-01, got "2027-02-30"$/),
    ]);
  });

  it('refuses a rule name that is not [a-z0-9-]+ and an unknown action', () => {
    const found = problems(`policies:
  - name: Bad_Name
    on: contract
    validations: [{ expression: 'true' }]
    action: audit
`);

    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^6:11 policies\[0\]\.name /);
    expect(found[1]).toMatch(/^9:13 policies\[0\]\.action /);
  });

  it('leaves a config without policies as it was', () => {
    const { config } = configOf('');

    expect(config).toBeDefined();
    expect('policies' in config!).toBe(false);
    expect(compilePolicies('contract-sync.yaml', config!)).toMatchObject({ policies: { policies: [], exceptions: [] }, diagnostics: [] });
  });
});
