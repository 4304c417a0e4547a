import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { positionsIn, readPlainYamlMap } from '../../engine/yaml/plain-yaml.ts';
import { DEFAULT_YAML_LIMITS, parseYamlSource, type YamlLimits } from '../../engine/yaml/yaml-source.ts';
import { readPlainYamlMapByConstructor } from '../helpers/plain-yaml-by-constructor.ts';
import { blockText, DOCUMENT_END, DOCUMENT_START, edited, odd, render, scalar, spaced, type Yaml } from '../helpers/yaml-arbitraries.ts';

/**
 * A value as a tree that tells apart what toEqual does not: the order of a map's keys, a map's
 * prototype, an own `__proto__` key, -0 and 0, NaN, and a list's holes.
 */
function shape(value: unknown): unknown {
  if (typeof value === 'number') return ['number', Object.is(value, -0) ? '-0' : String(value)];
  if (Array.isArray(value)) return ['list', value.length, Object.keys(value).length, value.map(shape)];
  if (value !== null && typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value) === Object.prototype ? 'Object.prototype' : 'other';
    return [
      'map',
      prototype,
      Object.keys(value).map((key) => [key, Object.getOwnPropertyDescriptor(value, key)?.enumerable, shape((value as Record<string, unknown>)[key])]),
    ];
  }
  return [typeof value, value];
}

/** Both ways read `text` to the same value, or both refuse it. */
function sameBothWays(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): unknown {
  const read = readPlainYamlMap(text, limits);
  const before = readPlainYamlMapByConstructor(text, limits);
  expect(shape(read)).toStrictEqual(shape(before));
  return read;
}

const key = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'Name', 'Id', '"a"', "'b'", 'x y', 'é') },
  { weight: 2, arbitrary: fc.constantFrom('__proto__', '"__proto__"', 'constructor', 'toString', 'hasOwnProperty', '"1"', '"<<"') },
  { weight: 1, arbitrary: fc.constantFrom('<<', '? a', '&k a', '*k', '!!str k', '[a]') },
  { weight: 1, arbitrary: odd },
);

const value: fc.Arbitrary<Yaml> = fc.letrec<{ node: Yaml }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: scalar(fc.constantFrom('x', '"x"', "'x'", '', '12', '-0', '1.5', 'null', 'true', '"a: b"', 'a b')) },
    { weight: 2, arbitrary: scalar(odd) },
    { weight: 1, arbitrary: scalar(fc.constantFrom('&a x', '*a', '!!str 1', '!!int "1"', '!x y')) },
    { weight: 1, arbitrary: blockText },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.boolean(), fc.array(fc.tuple(key, tie('node')), { maxLength: 4 }))
        .map(([flow, entries]): Yaml => ({ kind: 'map', flow, entries })),
    },
    { weight: 1, arbitrary: fc.tuple(fc.boolean(), fc.array(tie('node'), { maxLength: 3 })).map(([flow, items]): Yaml => ({ kind: 'seq', flow, items })) },
  ),
})).node;

/** Files whose top level is a map of random keys (duplicates, `__proto__`, odd scalars, anchors, tags) and values. */
const file = fc
  .record({ entries: fc.array(fc.tuple(key, value), { maxLength: 6 }), start: DOCUMENT_START, end: DOCUMENT_END, crlf: fc.boolean() })
  .map(({ entries, start, end, crlf }) => {
    const body = entries.map(([name, node]) => `${name}:${spaced(render(node, -2))}`).join('\n');
    const text = `${start}${body}${end}`;
    return crlf ? text.replace(/\n/g, '\r\n') : text;
  });

describe('readPlainYamlMap, values built in the same pass as its checks', () => {
  it('reads any text to what the checks and then js-yaml’s constructor read, or refuses it as they do', () => {
    let read = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 2, arbitrary: file }, { weight: 2, arbitrary: edited(file) }, { weight: 1, arbitrary: fc.string() }), (text) => {
        runs += 1;
        if (sameBothWays(text) !== undefined) read += 1;
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: many files are read, many refused.
    expect(read).toBeGreaterThan(runs / 20); // about 11 % in practice: a margin of ten standard deviations
    expect(read).toBeLessThan(runs);
  }, 120_000);

  it('what it reads, the yaml package reads to the same value', () => {
    let vouched = 0;
    fc.assert(
      fc.property(file, (text) => {
        const read = readPlainYamlMap(text, DEFAULT_YAML_LIMITS);
        if (read === undefined) return;
        vouched += 1;
        const parsed = parseYamlSource('a.yaml', text);
        expect(parsed.ok).toBe(true);
        if (parsed.ok) expect(shape(read)).toStrictEqual(shape(parsed.value));
      }),
      { numRuns: 1000 },
    );
    expect(vouched).toBeGreaterThan(150);
  }, 120_000);

  it('reads plain scalars that look like numbers, or nearly, as before', () => {
    const numberish = fc.string({ unit: fc.constantFrom(...'+-.0123456789eExXoO_:abcfinINaA'), maxLength: 8 });
    fc.assert(
      fc.property(numberish, numberish, (a, b) => {
        sameBothWays(`a: ${a}\n${b}: 1\nc: [${a}, ${b}]\n`);
      }),
      { numRuns: 3000 },
    );
    for (const text of [
      '0',
      '-0',
      '+0',
      '007',
      '1.',
      '.5',
      '-.5',
      '+1.',
      '-',
      '+',
      '.',
      '..',
      '1.2.3',
      '-0.0',
      '1e5',
      '1e-400',
      '0x1F',
      '0o17',
      '.inf',
      '-.Inf',
      '.NaN',
      '9007199254740993',
      '1_0',
    ])
      sameBothWays(`a: ${text}\nb: [${text}]\n`);
  });

  it.each([
    ['duplicate keys', 'a: 1\na: 2\n'],
    ['duplicate keys, a collection the second time', 'a: 1\nb: 2\na: {x: 1}\n'],
    ['duplicate keys, quoted and not', 'a: 1\n"a": 2\n'],
    ['duplicate keys in a flow map', 'a: {x: 1, x: 2}\n'],
    ['duplicate keys in a nested map', 'a:\n  b:\n    c: 1\n    c: 1\n'],
    ['a __proto__ key', '__proto__: {polluted: true}\na: 1\n'],
    ['a __proto__ key twice', '__proto__: 1\n"__proto__": 2\n'],
    ['constructor and toString keys', 'constructor: 1\ntoString: 2\nhasOwnProperty: 3\n'],
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a merge key', 'a: {x: 1}\nb:\n  <<: {y: 2}\n'],
    ['an empty key', ': 1\n'],
    ['a number key', '0815: a\n'],
    ['a null key', 'null: a\n'],
    ['a complex key', '? [a, b]\n: c\n'],
    ['a key without its value', 'a:\n'],
    ['numbers of every kind', 'a: [0, -0, +0, 0o17, 0x1F, 1e3, -1e400, 1e-400, .5, 1., -.inf, .NaN, 9007199254740993, 123456789012345678901234567890]\n'],
    ['empty values', 'a:\nb: ~\nc: ""\nd: []\ne: {}\nf: [ ]\n'],
    ['block scalars', 'a: |\n  x\n  y\nb: >-\n  x\n\n  y\n'],
    ['a list at the top', '- a\n- b\n'],
    ['a scalar at the top', 'a\n'],
    ['two documents', 'a: 1\n---\nb: 2\n'],
    ['nothing', ''],
  ])('%s', (_, text) => {
    sameBothWays(text);
  });

  it('refuses nesting near the limit as before', () => {
    const limits = { ...DEFAULT_YAML_LIMITS, maxDepth: 6 };
    for (let depth = 1; depth <= 8; depth++) {
      sameBothWays(`a: ${'['.repeat(depth)}1${']'.repeat(depth)}\n`, limits);
      sameBothWays(`${Array.from({ length: depth }, (_, level) => `${'  '.repeat(level)}k${level}:`).join('\n')} 1\n`, limits);
    }
  });
});

/** The line and column of `offset` as counted from the start, the plain way. */
function positionOracle(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lastNewline = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - (lastNewline + 1) + 1 };
}

describe('positionsIn', () => {
  it('gives the line and column of any offsets, asked for in any order, as counted from the start', () => {
    const text = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '\r', ':', 'é'), maxLength: 60 });
    fc.assert(
      fc.property(text, fc.array(fc.nat(70), { maxLength: 12 }), fc.boolean(), (given, offsets, sorted) => {
        const asked = sorted ? [...offsets].sort((a, b) => a - b) : offsets;
        const at = positionsIn(given);
        for (const offset of asked) expect(at(offset)).toStrictEqual(positionOracle(given, offset));
      }),
      { numRuns: 3000 },
    );
  });
});
