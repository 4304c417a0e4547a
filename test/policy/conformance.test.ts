/**
 * The cel-spec conformance suite (the data @bufbuild/cel-spec ships) through the path every rule
 * takes: `parse` and celProgram (engine/policy/compile.ts: the rules' environment, the strings
 * extension, errors as values). Cases that need protobuf messages, a container, a type-check-only
 * verdict or an extension the rules do not load are left out; the count that passes is held here.
 */
import { celList, celUint, isCelList, isCelMap, isCelType, isCelUint, parse } from '@bufbuild/cel';
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import { describe, expect, it } from 'vitest';
import { celProgram, rulesEnvironment } from '../../engine/policy/compile.ts';

/** Measured with @bufbuild/cel 0.6.1: the cases run and the cases that pass. A newer version may pass more, never fewer. */
const MEASURED = { run: 1203, passed: 1196 };

// Sections of extensions the rules' environment does not load (macros2: the two-variable
// comprehensions), and of protobuf messages and enums.
const SKIPPED_SECTIONS = new Set([
  'macros2',
  'bindings_ext',
  'block_ext',
  'encoders_ext',
  'math_ext',
  'optionals',
  'proto2',
  'proto2_ext',
  'proto3',
  'enums',
  'wrappers',
  'namespace',
]);
const NEEDS_PROTOBUF = /google\.protobuf|TestAllTypes|objectValue|enumValue|messageType|"@type"|cel\.expr\.conformance/;

type JsonValue = Record<string, unknown>;

/** The suite as @bufbuild/cel-spec serialises it (its testdata/tests.d.ts). */
interface Suite {
  readonly name: string;
  readonly suites?: readonly Suite[];
  readonly tests?: readonly { readonly original: JsonValue & { name?: string; expr: string } }[];
}

interface Case {
  readonly section: string;
  readonly name: string;
  readonly original: JsonValue & { expr: string };
}

function casesOf(suite: Suite, section: string): Case[] {
  return [
    ...(suite.tests ?? []).map((test) => ({ section, name: String(test.original.name ?? test.original.expr), original: test.original as Case['original'] })),
    ...(suite.suites ?? []).flatMap((child) => casesOf(child, section)),
  ];
}

function runnable(test: Case): boolean {
  const { original } = test;
  if (SKIPPED_SECTIONS.has(test.section) || original.container !== undefined || original.checkOnly === true || original.typedResult !== undefined) return false;
  if (original.value === undefined && original.evalError === undefined) return false;
  return !NEEDS_PROTOBUF.test(JSON.stringify(original));
}

function bytesOf(base64: string): Uint8Array {
  return new Uint8Array(Buffer.from(base64, 'base64'));
}

function doubleOf(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A conformance Value (JSON form) as an input binding. */
function inputOf(value: JsonValue): unknown {
  if ('int64Value' in value) return BigInt(String(value.int64Value));
  if ('uint64Value' in value) return celUint(BigInt(String(value.uint64Value)));
  if ('doubleValue' in value) return doubleOf(value.doubleValue);
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('nullValue' in value) return null;
  if ('bytesValue' in value) return bytesOf(String(value.bytesValue));
  if ('listValue' in value) return celList((((value.listValue as JsonValue).values ?? []) as JsonValue[]).map(inputOf) as never[]);
  if ('mapValue' in value) {
    const entries = ((value.mapValue as JsonValue).entries ?? []) as { key: JsonValue; value: JsonValue }[];
    return new Map(entries.map((entry) => [inputOf(entry.key), inputOf(entry.value)]));
  }
  throw new Error(`unsupported binding ${JSON.stringify(value)}`);
}

function keyOf(value: JsonValue): bigint | string | boolean | ReturnType<typeof celUint> {
  return inputOf(value) as bigint | string | boolean | ReturnType<typeof celUint>;
}

/** Whether a CEL result equals the expected conformance Value. */
function sameValue(expected: JsonValue, actual: unknown): boolean {
  if ('int64Value' in expected) return typeof actual === 'bigint' && actual === BigInt(String(expected.int64Value));
  if ('uint64Value' in expected) return isCelUint(actual) && actual.value === BigInt(String(expected.uint64Value));
  if ('doubleValue' in expected) {
    const want = doubleOf(expected.doubleValue);
    return typeof actual === 'number' && (Number.isNaN(want) ? Number.isNaN(actual) : actual === want);
  }
  if ('stringValue' in expected) return actual === expected.stringValue;
  if ('boolValue' in expected) return actual === expected.boolValue;
  if ('nullValue' in expected) return actual === null;
  if ('bytesValue' in expected) return actual instanceof Uint8Array && Buffer.from(actual).equals(Buffer.from(bytesOf(String(expected.bytesValue))));
  if ('typeValue' in expected) return isCelType(actual) && actual.name === expected.typeValue;
  if ('listValue' in expected) {
    const values = ((expected.listValue as JsonValue).values ?? []) as JsonValue[];
    return isCelList(actual) && actual.size === values.length && values.every((value, index) => sameValue(value, actual.get(index)));
  }
  if ('mapValue' in expected) {
    const entries = ((expected.mapValue as JsonValue).entries ?? []) as { key: JsonValue; value: JsonValue }[];
    return isCelMap(actual) && actual.size === entries.length && entries.every((entry) => sameValue(entry.value, actual.get(keyOf(entry.key))));
  }
  return false;
}

const environment = rulesEnvironment();

function passes(test: Case): boolean {
  let evaluate: ReturnType<typeof celProgram>;
  try {
    evaluate = celProgram(environment, parse(test.original.expr));
  } catch {
    return false;
  }
  const bindings = Object.fromEntries(
    Object.entries((test.original.bindings ?? {}) as Record<string, { value: JsonValue }>).map(([name, binding]) => [name, inputOf(binding.value)]),
  );
  const result = evaluate(bindings);
  if (test.original.evalError !== undefined) return 'error' in result;
  return 'value' in result && sameValue(test.original.value as JsonValue, result.value);
}

describe('CEL conformance through the rules path', () => {
  it('passes the cel-spec cases that need no protobuf message at least as often as measured', () => {
    const cases = ((conformance as Suite).suites ?? []).flatMap((suite) => casesOf(suite, suite.name)).filter(runnable);

    const failed = cases.filter((test) => !passes(test));

    const passed = cases.length - failed.length;
    // The figures docs/policies.md quotes; printed so that a new version's are easy to take.
    console.log(`CEL conformance: ${passed} of ${cases.length} cases pass; failing: ${failed.map((test) => `${test.section}/${test.name}`).join(', ')}`);
    expect(cases.length).toBeGreaterThanOrEqual(MEASURED.run);
    expect(passed).toBeGreaterThanOrEqual(MEASURED.passed);
  });
});
