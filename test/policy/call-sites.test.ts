/**
 * engine/policy/call-sites.ts: a call that tries first the overload that answered it last gives
 * what @bufbuild/cel's own overload resolution gives (the library planning the same expression in
 * the same environment is the reference), when one call site sees values of other types in turn,
 * an overload declared `dyn`, a google.protobuf.Any; and it does stop trying the others.
 */
import {
  celEnv,
  celFunc,
  celList,
  celMap,
  CelScalar,
  celUint,
  isCelError,
  objectType,
  parse,
  plan,
  type CelFunc,
  type CelResult,
  type CelValue,
} from '@bufbuild/cel';
import { create } from '@bufbuild/protobuf';
import { anyPack, DurationSchema, Int64ValueSchema, StringValueSchema, timestampFromDate, TimestampSchema } from '@bufbuild/protobuf/wkt';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { celProgram, rulesEnvironment } from '../../engine/policy/compile.ts';

type Outcome = { value: unknown } | { error: string };

/** The library's answer: the expression planned in the environment as it is. */
function libraryOutcome(environment: ReturnType<typeof rulesEnvironment>, expression: string, bindings: Record<string, unknown>): Outcome {
  // The values are CEL inputs (those celProgram takes as they are); the library's types name each kind.
  const result = plan(environment, parse(expression))(bindings as Parameters<ReturnType<typeof plan>>[0]) as CelResult;
  return isCelError(result) ? { error: result.message } : { value: result };
}

function timestampOf(iso: string): ReturnType<typeof timestampFromDate> {
  return timestampFromDate(new Date(iso));
}

describe('a call site that remembers its overload', () => {
  it('answers as the library while a dyn field holds an int, a string, a timestamp, then others', () => {
    const environment = rulesEnvironment();
    const evaluate = celProgram(environment, parse('object.x >= object.y'));
    const turns: [unknown, unknown, Outcome][] = [
      [1n, 2n, { value: false }],
      ['b', 'a', { value: true }],
      [timestampOf('2026-02-01T00:00:00Z'), timestampOf('2026-01-01T00:00:00Z'), { value: true }],
      [timestampOf('2025-02-01T00:00:00Z'), timestampOf('2026-01-01T00:00:00Z'), { value: false }],
      [3n, 3n, { value: true }],
      // int against double: another overload of the same name, after int's in the group.
      [1n, 1.5, { value: false }],
      [2n, 1n, { value: true }],
      ['a', 1n, { error: "found no matching overload for '_>=_' applied to '(string, int)'" }],
      [timestampOf('2026-01-01T00:00:00Z'), 'x', { error: "found no matching overload for '_>=_' applied to '(google.protobuf.Timestamp, string)'" }],
      ['a', 'b', { value: false }],
    ];

    const outcomes = turns.map(([x, y]) => evaluate({ object: { x, y } }));

    expect(outcomes).toEqual(turns.map(([, , expected]) => expected));
    expect(outcomes).toEqual(turns.map(([x, y]) => libraryOutcome(environment, 'object.x >= object.y', { object: { x, y } })));
  });

  it('unwraps a google.protobuf.Any as the library does, after the site has remembered the overload of its content', () => {
    const environment = rulesEnvironment();
    const evaluate = celProgram(environment, parse('x >= y'));
    const five = anyPack(Int64ValueSchema, create(Int64ValueSchema, { value: 5n }));

    const ints = evaluate({ x: 7n, y: 3n });
    const packed = evaluate({ x: five, y: 3n });
    const packedBelow = evaluate({ x: five, y: 6n });
    const packedString = evaluate({ x: anyPack(StringValueSchema, create(StringValueSchema, { value: 'b' })), y: 'a' });

    expect([ints, packed, packedBelow, packedString]).toEqual([{ value: true }, { value: true }, { value: false }, { value: true }]);
  });

  it('does not remember an overload declared dyn: a later call of a declared type gets its own', () => {
    const environment = celEnv({
      funcs: [celFunc('kind', [CelScalar.INT], CelScalar.STRING, () => 'int'), celFunc('kind', [CelScalar.DYN], CelScalar.STRING, () => 'dyn')],
    });
    const evaluate = celProgram(environment, parse('kind(x)'));

    const kinds = [evaluate({ x: 'text' }), evaluate({ x: 1n }), evaluate({ x: 'text' }), evaluate({ x: 2n })];

    expect(kinds).toEqual([{ value: 'dyn' }, { value: 'int' }, { value: 'dyn' }, { value: 'int' }]);
  });

  it('tries the overload that answered last first, and the others only when it does not match', () => {
    const tried: string[] = [];
    /** An overload whose attempts are counted: the library's group calls it to learn whether it matches. */
    function counted(func: CelFunc): CelFunc {
      return Object.assign(Object.create(func) as CelFunc, {
        call(id: number, target: CelValue | undefined, args: CelValue[]) {
          tried.push(func.id);
          return func.call(id, target, args);
        },
      });
    }
    const environment = celEnv({
      funcs: [
        counted(celFunc('kind', [CelScalar.INT], CelScalar.STRING, () => 'int')),
        counted(celFunc('kind', [CelScalar.STRING], CelScalar.STRING, () => 'string')),
        counted(celFunc('kind', [objectType(TimestampSchema)], CelScalar.STRING, () => 'timestamp')),
      ],
    });
    const evaluate = celProgram(environment, parse('kind(x)'));
    const at = timestampOf('2026-01-01T00:00:00Z');

    const first = evaluate({ x: at });
    const triedFirst = tried.splice(0);
    const again = [evaluate({ x: at }), evaluate({ x: at })];
    const triedAgain = tried.splice(0);
    const other = evaluate({ x: 'text' });
    const triedOther = tried.splice(0);

    expect([first, ...again, other]).toEqual([{ value: 'timestamp' }, { value: 'timestamp' }, { value: 'timestamp' }, { value: 'string' }]);
    expect(triedFirst).toEqual(['kind(int)', 'kind(string)', 'kind(google.protobuf.Timestamp)']);
    expect(triedAgain).toEqual(['kind(google.protobuf.Timestamp)', 'kind(google.protobuf.Timestamp)']);
    expect(triedOther).toEqual(['kind(google.protobuf.Timestamp)', 'kind(int)', 'kind(string)']);
  });

  it('answers every call as the library does, whatever the types a site sees in turn', () => {
    const environment = rulesEnvironment();
    const expressions = [
      'x >= y',
      'x < y',
      'x == y',
      'x + y == y + x',
      'size(x) > 0',
      'x in [y]',
      'type(x) == type(y)',
      'string(x) == string(y)',
      'x - y == x',
    ];
    const value = fc.oneof(
      fc.bigInt({ min: -3n, max: 3n }),
      fc.constantFrom(0, -0, 1.5, Number.NaN),
      fc.constantFrom('', 'a', 'b'),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom(new Uint8Array([1]), new Uint8Array()),
      fc.bigInt({ min: 0n, max: 3n }).map((number) => celUint(number)),
      fc.constantFrom('2026-01-01T00:00:00Z', '1999-12-31T23:59:59Z').map((iso) => timestampOf(iso)),
      fc.constantFrom(1n, 90n).map((seconds) => create(DurationSchema, { seconds })),
      fc.constantFrom(celList([1n]), celList([]), celMap(new Map([['a', 1n]]))),
      fc.constantFrom(2n, 4n).map((number) => anyPack(Int64ValueSchema, create(Int64ValueSchema, { value: number }))),
    );

    fc.assert(
      fc.property(fc.constantFrom(...expressions), fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 12 }), (expression, turns) => {
        const evaluate = celProgram(environment, parse(expression));

        const outcomes = turns.map(([x, y]) => evaluate({ x, y }));

        expect(outcomes).toEqual(turns.map(([x, y]) => libraryOutcome(environment, expression, { x, y })));
      }),
    );
  });
});
