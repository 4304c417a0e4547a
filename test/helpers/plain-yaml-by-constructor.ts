/**
 * The fast YAML path as it was before its values were built in the same pass as its checks:
 * engine/yaml/plain-yaml.ts's checks over js-yaml's events, then js-yaml's own constructor over the same
 * events with the `yaml` package's core-schema rules as js-yaml tags. Kept only as the oracle that
 * test/yaml/plain-yaml.property.test.ts holds the one-pass reader to. Its code is the replaced code,
 * kept as it was (its checks too, so that the test compares with what the reader did, not with
 * today's checks, but for one added since, marked where it is); only the types of what a visitor
 * is shown come from the reader, whose visitors must be the same.
 */
import {
  COLLECTION_STYLE,
  constructFromEvents,
  defineScalarTag,
  EVENT_ID,
  getScalarValue,
  mapTag,
  NOT_RESOLVED,
  parseEvents,
  SCALAR_STYLE,
  Schema,
  seqTag,
  strTag,
  type Event,
  type ScalarEvent,
} from 'js-yaml';
import { inexactNumber } from '../../engine/model/exact-number.ts';
import type { PlainYamlAncestor, PlainYamlForm, PlainYamlVisit } from '../../engine/yaml/plain-yaml.ts';
import type { YamlLimits } from '../../engine/yaml/yaml-source.ts';

// Read once: in the CLI's bundle js-yaml is its CommonJS build, and esbuild's interop reads every
// use of an import (`EVENT_ID.SCALAR`, `getScalarValue(...)`) through a getter it puts on each
// export: per event, 17 % of validate's CPU (10,000 contracts, Node 20). Local constants are plain reads.
const { DOCUMENT: DOCUMENT_EVENT, MAPPING: MAPPING_EVENT, SCALAR: SCALAR_EVENT, ALIAS: ALIAS_EVENT, POP: POP_EVENT } = EVENT_ID;
const { PLAIN, SINGLE_QUOTED, DOUBLE_QUOTED, LITERAL_BLOCK, FOLDED_BLOCK } = SCALAR_STYLE;
const { FLOW } = COLLECTION_STYLE;
const UNRESOLVED = NOT_RESOLVED;
const readEvents = parseEvents;
const scalarValueOf = getScalarValue;
const construct = constructFromEvents;

// The `yaml` package's core schema (node_modules/yaml/dist/schema/core), rule for rule.
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const INT_OCT = /^0o[0-7]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/**
 * `value`, read from `source`, when JSON carries it exactly; else the file is not plain: the throw
 * makes the reader return undefined, and the `yaml` package's path reports it (inexactNumber).
 */
function exactly(source: string, value: number): number {
  if (inexactNumber(source, value) !== undefined) throw new RangeError('inexact number');
  return value;
}

const nullTag = defineScalarTag('tag:yaml.org,2002:null', {
  implicit: true,
  implicitFirstChars: ['', '~', 'n', 'N'],
  resolve: (source) => (NULL.test(source) ? null : UNRESOLVED),
  identify: (value) => value === null,
});
const boolTag = defineScalarTag('tag:yaml.org,2002:bool', {
  implicit: true,
  implicitFirstChars: ['t', 'T', 'f', 'F'],
  resolve: (source) => (BOOL.test(source) ? source[0] === 't' || source[0] === 'T' : UNRESOLVED),
  identify: (value) => typeof value === 'boolean',
});
const intTag = defineScalarTag('tag:yaml.org,2002:int', {
  implicit: true,
  implicitFirstChars: ['-', '+', ...'0123456789'],
  resolve(source) {
    if (INT_OCT.test(source)) return exactly(source, parseInt(source.substring(2), 8));
    if (INT.test(source)) return exactly(source, parseInt(source, 10));
    if (INT_HEX.test(source)) return exactly(source, parseInt(source.substring(2), 16));
    return UNRESOLVED;
  },
  identify: (value) => Number.isInteger(value),
});
const floatTag = defineScalarTag('tag:yaml.org,2002:float', {
  implicit: true,
  implicitFirstChars: ['-', '+', '.', ...'0123456789'],
  resolve(source) {
    if (FLOAT_NAN.test(source)) {
      if (source.slice(-3).toLowerCase() === 'nan') return NaN;
      return source[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    }
    if (FLOAT_EXP.test(source) || FLOAT.test(source)) return exactly(source, parseFloat(source));
    return UNRESOLVED;
  },
  identify: (value) => typeof value === 'number',
});

const SCHEMA = new Schema([strTag, nullTag, boolTag, intTag, floatTag, seqTag, mapTag]);

/** What the `yaml` package reads as something other than a string, when written as a plain scalar: all of the above in one test. */
const NON_STRING = new RegExp(`^(?:${[NULL, BOOL, INT, INT_OCT, INT_HEX, FLOAT_NAN, FLOAT_EXP, FLOAT].map((rule) => rule.source.slice(1, -1)).join('|')})$`);

/** Where a scalar starts as the `yaml` package counts it: at the opening quote of a quoted one. */
function scalarStart(event: ScalarEvent): number {
  return event.style === SINGLE_QUOTED || event.style === DOUBLE_QUOTED ? event.valueStart - 1 : event.valueStart;
}

function scalarEnd(event: ScalarEvent): number {
  return event.style === SINGLE_QUOTED || event.style === DOUBLE_QUOTED ? event.valueEnd + 1 : event.valueEnd;
}

/** The offset just after the bracket closing a flow collection whose last content ends at `from`, or -1 if that is not on the same line. */
function flowEnd(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const char = text[index];
    if (char === ']' || char === '}') return index + 1;
    if (char !== ' ' && char !== ',' && char !== ':' && char !== '?') return -1;
  }
  return -1;
}

// Around the document only blank lines, comments, and `---` / `...` markers at the start of a line.
const PROLOGUE = /^\uFEFF?(?:(?:[ ]*(?:#[^\n]*)?|---(?:[ ]+#[^\n]*)?)\r?\n)*$/;
const EPILOGUE = /^[ ]*(?:#[^\n]*)?\r?(?:\n(?:[ ]*(?:#[^\n]*)?|\.\.\.(?:[ ]+#[^\n]*)?)\r?)*\n?$/;
/** The same after a last key whose value is empty (`EbaCode:`), which the text ends with. */
const EPILOGUE_AFTER_KEY = new RegExp(`^[ ]*:${EPILOGUE.source.slice(1)}`);

/**
 * The part of `text` that decides whether it is a plain prologue or epilogue: trailing blank lines
 * (spaces, newlines) match either pattern's repetition whatever their number, so only the text up
 * to the newline after the last other character is tested. Without the cut, millions of blank lines
 * overflow the regular expression engine's stack.
 */
function withoutBlankTail(text: string): string {
  let last = text.length - 1;
  while (last >= 0 && (text[last] === '\n' || text[last] === ' ' || text[last] === '\r')) last -= 1;
  const newline = text.indexOf('\n', last + 1);
  return newline === -1 ? text : text.slice(0, newline + 1);
}

/** `pattern` tested on `text` as above; false (the caller then reads exactly) when the engine gives up. */
function matchesAround(pattern: RegExp, text: string): boolean {
  try {
    return pattern.test(withoutBlankTail(text));
  } catch {
    return false;
  }
}

interface Frame extends PlainYamlAncestor {
  /** Of a mapping: whether the next node is a key. */
  atKey: boolean;
  key: string;
  readonly flow: boolean;
  /** Of the outermost flow collection: where it starts; else -1. */
  readonly flowStart: number;
}

function isBlockScalar(event: Event): boolean {
  return event.type === SCALAR_EVENT && (event.style === LITERAL_BLOCK || event.style === FOLDED_BLOCK);
}

function formOf(event: Event): PlainYamlForm {
  if (event.type !== SCALAR_EVENT) return 'collection';
  if (event.valueStart < 0) return 'empty';
  return isBlockScalar(event) ? 'block' : 'inline';
}

/**
 * Reads `text` (already size-checked and decoded) the fast way: its top-level map, or undefined
 * when the `yaml` package must read it. Never throws.
 */
export function readPlainYamlMapByConstructor(text: string, limits: YamlLimits, visit?: PlainYamlVisit): Record<string, unknown> | undefined {
  if (text.includes('\t') || /\r(?!\n)/.test(text)) return undefined;
  let events: Event[];
  try {
    // The parser recurses once per level: its own limit stops it before the stack is at risk.
    events = readEvents(text, { maxDepth: limits.maxDepth + 2 });
  } catch {
    return undefined;
  }

  // The first newline at or after an offset: nodes come in text order, so one scan serves every
  // node on a line (a flow map of 200,000 keys on one line would otherwise rescan it for each).
  let newlineFrom = -1;
  let newlineAt = -1;
  function newlineAfter(offset: number): number {
    if (newlineFrom === -1 || offset < newlineFrom || (newlineAt !== -1 && offset > newlineAt)) {
      newlineFrom = offset;
      newlineAt = text.indexOf('\n', offset);
    }
    return newlineAt;
  }

  const stack: Frame[] = [];
  let documents = 0;
  let end = 0;
  let flowDepth = 0;
  let emptyLast = false;
  for (const event of events) {
    if (event.type === DOCUMENT_EVENT) {
      documents += 1;
      if (documents > 1 || event.directives.length > 0) return undefined;
      continue;
    }
    if (event.type === ALIAS_EVENT) return undefined;
    if (event.type === POP_EVENT) {
      const frame = stack.pop();
      if (frame === undefined) continue;
      if (frame.flow) {
        const closed = flowEnd(text, Math.max(end, frame.flowStart + 1));
        if (closed === -1 || text[closed] === '#') return undefined;
        end = closed;
        if (frame.flowStart !== -1) {
          const newline = newlineAfter(frame.flowStart);
          if (newline !== -1 && newline < end) return undefined;
        }
        flowDepth -= 1;
      }
      const parent = stack.at(-1);
      if (parent?.kind === 'mapping') parent.atKey = true;
      continue;
    }

    // A node: a scalar, a sequence or a mapping.
    emptyLast = false;
    if (event.anchorStart !== -1 || event.tagStart !== -1) return undefined;
    // Nesting as engine/yaml/yaml-source.ts counts it, with a margin: near the limit, it decides.
    if (stack.length >= limits.maxDepth - 1) return undefined;
    const parent = stack.at(-1);
    // The one check added since: a byte order mark at the document's start that is not the text's first character.
    if (
      parent === undefined &&
      (event.type !== MAPPING_EVENT || text.charCodeAt(event.start) === 0xfeff || !matchesAround(PROLOGUE, text.slice(0, event.start)))
    )
      return undefined;
    const isKey = parent?.kind === 'mapping' && parent.atKey;
    const start = event.type === SCALAR_EVENT ? scalarStart(event) : event.start;
    const form = formOf(event);

    if (parent?.kind === 'mapping') {
      if (isKey) {
        if (event.type !== SCALAR_EVENT || isBlockScalar(event)) return undefined;
        const key = scalarValueOf(text, event);
        // Non-string keys (`0815:`), merge keys and overlong implicit keys: the `yaml` package decides.
        if ((event.style === PLAIN && NON_STRING.test(key)) || key === '<<' || event.valueEnd - start > 1000) return undefined;
        parent.key = key;
      }
      parent.atKey = !isKey;
    }
    if (visit !== undefined && !visit(stack, isKey ? parent.key : undefined, form, start)) return undefined;

    if (event.type === SCALAR_EVENT) {
      // An empty scalar (`a:`) has no place in the text.
      if (form === 'empty') {
        emptyLast = true;
        continue;
      }
      end = scalarEnd(event);
      // `"x"#c`: the yaml package wants a space before a comment.
      if (text[end] === '#') return undefined;
      if (form === 'inline') {
        const newline = newlineAfter(start);
        if (newline !== -1 && newline < end) return undefined;
      }
      if (form === 'block' && flowDepth > 0) return undefined;
      continue;
    }
    const flow = event.style === FLOW;
    if (flow) flowDepth += 1;
    end = start + 1;
    stack.push({ kind: event.type === MAPPING_EVENT ? 'mapping' : 'sequence', atKey: true, key: '', flow, flowStart: flow && flowDepth === 1 ? start : -1 });
  }
  if (documents !== 1 || !matchesAround(emptyLast ? EPILOGUE_AFTER_KEY : EPILOGUE, text.slice(end))) return undefined;

  let documentValues: unknown[];
  try {
    documentValues = construct(events, { source: text, schema: SCHEMA, maxAliases: 0, maxTotalMergeKeys: 0 });
  } catch {
    // Duplicate keys, and whatever else js-yaml refuses.
    return undefined;
  }
  const [value] = documentValues;
  if (documentValues.length !== 1 || value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}
