import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema, contractReadSchema, readContract, validateOps } from '../../engine/model/index.ts';
import { diffContract } from '../../engine/plan/diff.ts';
import { fingerprint } from '../../engine/model/fingerprint.ts';
import { contract } from '../plan/arbitraries.ts';

/** `value` with a key the model does not list added to every map, at every depth. */
function withExtras(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((item) => withExtras(item, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withExtras(item, depth + 1)]));
  return { ...copy, [`Extra${depth}`]: { Links: [depth] } };
}

describe('readContract', () => {
  it('reads every contract a desired file may hold back unchanged, in any timestamp notation', () => {
    fc.assert(
      fc.property(contract('any'), (fields) => {
        const read = readContract(fields);

        expect(read.issues).toEqual([]);
        expect(read.fields).toEqual(fields);
      }),
    );
  });

  it('keeps fields and member keys the model does not list out of the fields, the fingerprint and the plan', () => {
    fc.assert(
      fc.property(contract('any'), contract('utc'), (known, desired) => {
        const read = readContract(withExtras(known));

        expect(read.issues).toEqual([]);
        expect(read.fields).toEqual(known);
        expect(fingerprint(read.fields)).toBe(fingerprint(known));
        expect(diffContract(read.fields, desired)).toEqual(diffContract(known, desired));
      }),
    );
  });

  it('reads a null scalar as not set, and keeps the nulls the model allows inside members and durations', () => {
    const owner = { OwnerType: { Value: 1 }, User: { Id: 5, Name: null, Email: null, OrganizationalUnit: { Id: null, Name: null } } };

    const read = readContract({
      Name: null,
      AnnualExpensesAmount: null,
      ValidTo: null,
      SupplierNoticePeriod: null,
      OrderingPartyNoticePeriod: { Days: null },
      Owner: [owner],
    });

    expect(read).toEqual({ fields: { OrderingPartyNoticePeriod: { Days: null }, Owner: [owner] }, issues: [] });
  });

  it('reads a null member field the model does not allow as not set, so that a Remove never sends it', () => {
    const read = readContract({
      OrganizationalUnit: [{ Id: 3, Name: null }],
      Owner: [{ OwnerType: { Name: null, Value: 1 }, User: { Id: 5, OrganizationalUnit: null } }],
      Type: [{ Lookup: 'ICT', IsDora: null, EbaCode: null }],
    });

    expect(read).toEqual({
      fields: { OrganizationalUnit: [{ Id: 3 }], Owner: [{ OwnerType: { Value: 1 }, User: { Id: 5 } }], Type: [{ Lookup: 'ICT', EbaCode: null }] },
      issues: [],
    });
    expect(validateOps(diffContract(read.fields, { OrganizationalUnit: [], Owner: [], Type: [] }))).toEqual([]);
  });

  it.each([
    ['Company null', { Company: null }, ['Company'], 'expected a list, got null'],
    ['Company a string', { Company: 'x' }, ['Company'], 'expected a list, got "x"'],
    ['Owner a map', { Owner: { OwnerType: { Value: 1 } } }, ['Owner'], 'expected a list, got a map'],
    ['Area a fraction', { Area: 1.5 }, ['Area'], 'expected an integer or null, got 1.5'],
    ['ValidFrom a number', { ValidFrom: 20270101 }, ['ValidFrom'], 'expected a string or null, got 20270101'],
    ['a duration unit a string', { SupplierNoticePeriod: { Days: '30' } }, ['SupplierNoticePeriod', 'Days'], 'expected a number or null, got "30"'],
    ['a member not a map', { Company: [7] }, ['Company', 0], 'expected a map, got 7'],
    ['a member without its identity', { Type: [{ EbaCode: null }] }, ['Type', 0], 'missing required field "Lookup"'],
    ['an owner user id null', { Owner: [{ OwnerType: { Value: 1 }, User: { Id: null } }] }, ['Owner', 0, 'User', 'Id'], 'expected an integer, got null'],
    ['an owner type null', { Owner: [{ OwnerType: null, User: { Id: 1 } }] }, ['Owner', 0, 'OwnerType'], 'expected a map, got null'],
    ['a company relation type null', { Company: [{ Id: 1, RelationType: null }] }, ['Company', 0, 'RelationType'], 'expected a string, got null'],
    ['a Type IsDora a string', { Type: [{ Lookup: 'X', IsDora: 'yes' }] }, ['Type', 0, 'IsDora'], 'expected true or false or null, got "yes"'],
  ])('refuses a known field of the wrong type: %s', (_case, body, path, message) => {
    const read = readContract(body);

    expect(read.issues).toEqual([expect.objectContaining({ path, message })]);
    expect(read.fields).toEqual({});
  });

  it('refuses a read that is not a map', () => {
    expect(readContract([]).issues).toEqual([expect.objectContaining({ path: [], message: 'expected a map, got a list' })]);
  });

  it('is a schema a stock JSON Schema validator accepts, without an `additionalProperties: false` anywhere', () => {
    const schema = contractReadSchema();

    expect(JSON.stringify(schema)).not.toContain('additionalProperties');
    expect(compileSchema({ ...schema, $id: undefined })({ Name: 'x', Colour: 'red' })).toEqual([]);
  });
});
