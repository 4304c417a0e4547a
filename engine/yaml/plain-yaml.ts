/**
 * The fast way to read a plain YAML file: js-yaml's event parser, and its values built in the same
 * pass as the checks over its events (js-yaml's own constructor would be a second pass over them).
 *
 * It only vouches for plain files, in which js-yaml and the `yaml` package provably read the same
 * value: one document whose top level is a map, no directives, tags, anchors or aliases, only
 * string keys, no duplicate keys, no tabs or lone carriage returns, no scalar or flow collection
 * over several lines, nesting well inside the limit. For anything else it returns undefined and
 * the caller reads the file with the `yaml` package (engine/yaml/yaml-source.ts), which gives the exact
 * messages and positions of every problem. Plain scalars are resolved by the `yaml` package's
 * YAML 1.2 core-schema rules, not js-yaml's (which differ, e.g. for `1e400`).
 */
import {
  COLLECTION_STYLE,
  EVENT_ID,
  getScalarValue,
  parseEvents,
  SCALAR_STYLE,
  type Event,
  type MappingEvent,
  type ScalarEvent,
  type SequenceEvent,
} from 'js-yaml';
import { inexactNumber } from '../model/exact-number.ts';
import type { Position, YamlLimits } from './yaml-source.ts';

// Read once: in the CLI's bundle js-yaml is its CommonJS build, and esbuild's interop reads every
// use of an import (`EVENT_ID.SCALAR`, `getScalarValue(...)`) through a getter it puts on each
// export: per event, 17 % of validate's CPU (10,000 contracts, Node 20). Local constants are plain reads.
const { DOCUMENT: DOCUMENT_EVENT, MAPPING: MAPPING_EVENT, SCALAR: SCALAR_EVENT, ALIAS: ALIAS_EVENT, POP: POP_EVENT } = EVENT_ID;
const { PLAIN, SINGLE_QUOTED, DOUBLE_QUOTED, LITERAL_BLOCK, FOLDED_BLOCK } = SCALAR_STYLE;
const { FLOW } = COLLECTION_STYLE;
const readEvents = parseEvents;
const scalarValueOf = getScalarValue;

// The `yaml` package's core schema (node_modules/yaml/dist/schema/core), rule for rule; its `int`
// (`^[-+]?[0-9]+$`) and `float` (`^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$`) are decimalForm below.
const NULL = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_OCT = /^0o[0-7]+$/;
const INT_HEX = /^0x[0-9a-fA-F]+$/;
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;

/** A number that JSON does not carry exactly: the file is not plain. */
const INEXACT = Symbol('inexact');

/** `value`, read from `source`, when JSON carries it exactly; else INEXACT (the `yaml` package's path reports it: inexactNumber). */
function exactly(source: string, value: number): number | typeof INEXACT {
  return inexactNumber(source, value) === undefined ? value : INEXACT;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * Which of the core schema's `int` and `float` rules a text matches, found without a regular
 * expression: a sign, then digits, or digits and a point and digits, or a point and digits. Such a
 * text matches none of the other rules (no `0o`, `0x`, exponent or `.inf`), so the rule it matches
 * is the one that reads it; a text it does not take matches neither rule.
 */
function decimalForm(source: string): 'int' | 'float' | undefined {
  const { length } = source;
  let index = source.charCodeAt(0) === 45 || source.charCodeAt(0) === 43 ? 1 : 0;
  const digitsFrom = index;
  while (index < length && isDigit(source.charCodeAt(index))) index++;
  const digits = index - digitsFrom;
  if (index === length) return digits > 0 ? 'int' : undefined;
  if (source.charCodeAt(index) !== 46) return undefined;
  index++;
  const fractionFrom = index;
  while (index < length && isDigit(source.charCodeAt(index))) index++;
  if (index !== length) return undefined;
  return digits > 0 || index > fractionFrom ? 'float' : undefined;
}

/**
 * The value of a plain scalar by the rules above, tried in the core schema's order (null, bool,
 * int, float, else a string); each rule can only match a text starting with one of a few
 * characters, so the first character picks the rules worth trying.
 */
function plainValue(source: string): unknown {
  const first = source.charCodeAt(0);
  // '' (NaN), '~', 'N', 'n'
  if (Number.isNaN(first) || first === 126 || first === 78 || first === 110) return NULL.test(source) ? null : source;
  // 'T', 't', 'F', 'f'
  if (first === 84 || first === 116 || first === 70 || first === 102) return BOOL.test(source) ? first === 116 || first === 84 : source;
  // '-', '+', '.', '0'-'9'
  if (first !== 45 && first !== 43 && first !== 46 && (first < 48 || first > 57)) return source;
  const written = decimalForm(source);
  if (written === 'int') return exactly(source, parseInt(source, 10));
  if (written === 'float') return exactly(source, parseFloat(source));
  if (INT_OCT.test(source)) return exactly(source, parseInt(source.substring(2), 8));
  if (INT_HEX.test(source)) return exactly(source, parseInt(source.substring(2), 16));
  if (FLOAT_NAN.test(source)) {
    if (source.slice(-3).toLowerCase() === 'nan') return NaN;
    return source[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (FLOAT_EXP.test(source)) return exactly(source, parseFloat(source));
  return source;
}

/** Where a scalar starts as the `yaml` package counts it: at the opening quote of a quoted one. */
function scalarStart(event: ScalarEvent): number {
  return event.style === SINGLE_QUOTED || event.style === DOUBLE_QUOTED ? event.valueStart - 1 : event.valueStart;
}

function scalarEnd(event: ScalarEvent): number {
  return event.style === SINGLE_QUOTED || event.style === DOUBLE_QUOTED ? event.valueEnd + 1 : event.valueEnd;
}

/**
 * Offsets -> 1-based line and column. Counted on from the last offset asked for (nodes come in text
 * order, so each newline is looked for once, however long its line), from the start again for an
 * earlier offset.
 */
export function positionsIn(text: string): (offset: number) => Position {
  let last = 0;
  let line = 1;
  let lineStart = 0;
  // The first newline after lineStart: past every offset asked for so far, or -1.
  let next = text.indexOf('\n');
  return function at(offset) {
    if (offset < last) {
      line = 1;
      lineStart = 0;
      next = text.indexOf('\n');
    }
    while (next !== -1 && next < offset) {
      line += 1;
      lineStart = next + 1;
      next = text.indexOf('\n', lineStart);
    }
    last = offset;
    return { line, column: offset - lineStart + 1 };
  };
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

const BYTE_ORDER_MARK = 0xfeff;
const LINE_FEED = 0x0a;

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

/** A map or a list that holds the node being read. */
export interface PlainYamlAncestor {
  readonly kind: 'mapping' | 'sequence';
  /** Of a map: the key whose value is being read, or of a key node, that key. */
  readonly key: string;
}

interface Frame extends PlainYamlAncestor {
  /** Of a mapping: whether the next node is a key. */
  atKey: boolean;
  key: string;
  readonly flow: boolean;
  /** Of the outermost flow collection: where it starts; else -1. */
  readonly flowStart: number;
  /** What is read of it so far: the map's object or the list's array. */
  readonly value: Record<string, unknown> | unknown[];
}

/**
 * How a node is written: `inline` a plain or quoted scalar, `block` a literal or folded one,
 * `empty` no scalar at all (`a:`), `collection` a map or a list.
 */
export type PlainYamlForm = 'inline' | 'block' | 'empty' | 'collection';

/**
 * Shown each node on the way, before the node's own checks, by a caller that wants positions:
 * `ancestors` outermost first (the top-level map is `ancestors[0]`; empty for the top-level map
 * itself), `key` the text of a map key (undefined for a value or a list item), `start` the offset
 * where the node starts as the `yaml` package counts it. Returning false refuses the file.
 */
export type PlainYamlVisit = (ancestors: readonly PlainYamlAncestor[], key: string | undefined, form: PlainYamlForm, start: number) => boolean;

function isBlockScalar(event: Event): boolean {
  return event.type === SCALAR_EVENT && (event.style === LITERAL_BLOCK || event.style === FOLDED_BLOCK);
}

function formOf(event: Event): PlainYamlForm {
  if (event.type !== SCALAR_EVENT) return 'collection';
  if (event.valueStart < 0) return 'empty';
  return isBlockScalar(event) ? 'block' : 'inline';
}

/**
 * Puts `value` where `parent` wants its next node: under the map's key, or at the end of the list.
 * False for a key the map already has (duplicate keys are the `yaml` package's to report). A key
 * `__proto__` is an own property, not the object's prototype.
 */
function addTo(parent: Frame, value: unknown): boolean {
  if (parent.kind === 'sequence') {
    (parent.value as unknown[]).push(value);
    return true;
  }
  const map = parent.value as Record<string, unknown>;
  const { key } = parent;
  if (Object.hasOwn(map, key)) return false;
  if (key === '__proto__') Object.defineProperty(map, key, { value, enumerable: true, configurable: true, writable: true });
  else map[key] = value;
  return true;
}

/** A `\r` not followed by `\n` (what `/\r(?!\n)/` finds), by indexOf: a tenth of the regular expression's time over a repository. */
function hasLoneCarriageReturn(text: string): boolean {
  for (let at = text.indexOf('\r'); at !== -1; at = text.indexOf('\r', at + 1)) if (text.charCodeAt(at + 1) !== LINE_FEED) return true;
  return false;
}

/**
 * Reads `text` (already size-checked and decoded) the fast way: its top-level map, or undefined
 * when the `yaml` package must read it. Never throws. Values are built as the events come, in the
 * same pass as the checks: maps as plain objects, lists as arrays, plain scalars by the rules above,
 * every other scalar as its string.
 */
export function readPlainYamlMap(text: string, limits: YamlLimits, visit?: PlainYamlVisit): Record<string, unknown> | undefined {
  const events = eventsOf(text, limits);
  if (events === undefined) return undefined;
  const reading: Reading = {
    text,
    limits,
    visit,
    stack: [],
    root: undefined,
    documents: 0,
    end: 0,
    flowDepth: 0,
    emptyLast: false,
    newlineFrom: -1,
    newlineAt: -1,
  };
  for (const event of events) if (!readEvent(reading, event)) return undefined;
  return rootOf(reading);
}

/** What the read carries from one event to the next. */
interface Reading {
  readonly text: string;
  readonly limits: YamlLimits;
  readonly visit: PlainYamlVisit | undefined;
  /** The maps and lists open around the next node, outermost first. */
  readonly stack: Frame[];
  root: Record<string, unknown> | undefined;
  documents: number;
  /** Where the last node read ends in the text (of a flow collection, after its closing bracket). */
  end: number;
  /** How many flow collections are open. */
  flowDepth: number;
  /** Whether the last node was an empty scalar (`a:`). */
  emptyLast: boolean;
  /** Of newlineAfter: the offset it last scanned from, and the newline it found (-1: none). */
  newlineFrom: number;
  newlineAt: number;
}

type NodeEvent = ScalarEvent | SequenceEvent | MappingEvent;

/** The text's events; undefined for a text with tabs or lone carriage returns, or one the parser refuses. */
function eventsOf(text: string, limits: YamlLimits): Event[] | undefined {
  if (text.includes('\t') || hasLoneCarriageReturn(text)) return undefined;
  try {
    // The parser recurses once per level: its own limit stops it before the stack is at risk.
    return readEvents(text, { maxDepth: limits.maxDepth + 2 });
  } catch {
    return undefined;
  }
}

/**
 * The first newline at or after an offset: nodes come in text order, so one scan serves every node
 * on a line (a flow map of 200,000 keys on one line would otherwise rescan it for each).
 */
function newlineAfter(reading: Reading, offset: number): number {
  if (reading.newlineFrom === -1 || offset < reading.newlineFrom || (reading.newlineAt !== -1 && offset > reading.newlineAt)) {
    reading.newlineFrom = offset;
    reading.newlineAt = reading.text.indexOf('\n', offset);
  }
  return reading.newlineAt;
}

/** Reads one event; false when it makes the file one the `yaml` package must read. */
function readEvent(reading: Reading, event: Event): boolean {
  if (event.type === DOCUMENT_EVENT) {
    reading.documents += 1;
    return reading.documents === 1 && event.directives.length === 0;
  }
  if (event.type === ALIAS_EVENT) return false;
  if (event.type === POP_EVENT) return closeCollection(reading);
  return readNode(reading, event);
}

/** The end of a map or a list: a map has no key left without its value, and a flow one closes on the line it starts. */
function closeCollection(reading: Reading): boolean {
  const { stack, text } = reading;
  const frame = stack.pop();
  if (frame === undefined) return true;
  // A key without its value.
  if (frame.kind === 'mapping' && !frame.atKey) return false;
  if (frame.flow) {
    const closed = flowEnd(text, Math.max(reading.end, frame.flowStart + 1));
    if (closed === -1 || text[closed] === '#') return false;
    reading.end = closed;
    if (frame.flowStart !== -1) {
      const newline = newlineAfter(reading, frame.flowStart);
      if (newline !== -1 && newline < closed) return false;
    }
    reading.flowDepth -= 1;
  }
  const parent = stack[stack.length - 1];
  if (parent?.kind === 'mapping') parent.atKey = true;
  return true;
}

/** A node: a scalar, a sequence or a mapping; its checks, then its value put in place. */
function readNode(reading: Reading, event: NodeEvent): boolean {
  const { stack, text, visit } = reading;
  reading.emptyLast = false;
  if (event.anchorStart !== -1 || event.tagStart !== -1) return false;
  // Nesting as engine/yaml/yaml-source.ts counts it, with a margin: near the limit, it decides.
  if (stack.length >= reading.limits.maxDepth - 1) return false;
  const parent = stack[stack.length - 1];
  if (parent === undefined && !isPlainTop(reading, event)) return false;
  const isKey = parent?.kind === 'mapping' && parent.atKey;
  const start = event.type === SCALAR_EVENT ? scalarStart(event) : event.start;
  const form = formOf(event);

  if (isKey) {
    if (!readKey(text, event, parent, start, form)) return false;
  } else if (parent?.kind === 'mapping') {
    parent.atKey = true;
  }
  if (visit !== undefined && !visit(stack, isKey ? parent.key : undefined, form, start)) return false;

  if (event.type === SCALAR_EVENT) return readScalar(reading, event, isKey ? undefined : parent, start, form);
  return openCollection(reading, event, parent, start);
}

/**
 * Whether a node without a parent is the text's one top-level map, after a plain prologue. The yaml
 * package drops a byte order mark at the start of any line before the document; the event parser
 * keeps one that is not the text's first character, in the first key.
 */
function isPlainTop(reading: Reading, event: NodeEvent): boolean {
  const { text } = reading;
  return (
    event.type === MAPPING_EVENT &&
    reading.root === undefined &&
    text.charCodeAt(event.start) !== BYTE_ORDER_MARK &&
    matchesAround(PROLOGUE, text.slice(0, event.start))
  );
}

/** A map's key: an inline string, which the map's next node is the value of. */
function readKey(text: string, event: NodeEvent, map: Frame, start: number, form: PlainYamlForm): boolean {
  if (event.type !== SCALAR_EVENT || form === 'block') return false;
  const key = scalarValueOf(text, event);
  // Non-string keys (`0815:`, and the empty key), merge keys and overlong implicit keys: the `yaml` package decides.
  if ((event.style === PLAIN && typeof plainValue(key) !== 'string') || key === '<<' || event.valueEnd - start > 1000) return false;
  map.key = key;
  map.atKey = false;
  return true;
}

/**
 * A scalar; a value is put `into` its map or list (undefined for a key, a string read above): an
 * empty scalar (`a:`) is null, a plain one by the rules above, any other its string. What follows a
 * key or a value on its line is checked alike.
 */
function readScalar(reading: Reading, event: ScalarEvent, into: Frame | undefined, start: number, form: PlainYamlForm): boolean {
  const { text } = reading;
  if (into !== undefined) {
    const value = form === 'empty' ? null : event.style === PLAIN ? plainValue(scalarValueOf(text, event)) : scalarValueOf(text, event);
    if (value === INEXACT || !addTo(into, value)) return false;
  }
  // An empty scalar (`a:`) has no place in the text.
  if (form === 'empty') {
    reading.emptyLast = true;
    return true;
  }
  const end = scalarEnd(event);
  reading.end = end;
  // `"x"#c`: the yaml package wants a space before a comment.
  if (text[end] === '#') return false;
  if (form === 'inline') {
    const newline = newlineAfter(reading, start);
    if (newline !== -1 && newline < end) return false;
  }
  return form !== 'block' || reading.flowDepth === 0;
}

/** A map or a list begins: its value, put in `parent` (or the root), is filled as its nodes come. */
function openCollection(reading: Reading, event: SequenceEvent | MappingEvent, parent: Frame | undefined, start: number): boolean {
  const flow = event.style === FLOW;
  if (flow) reading.flowDepth += 1;
  reading.end = start + 1;
  const mapping = event.type === MAPPING_EVENT;
  const value: Record<string, unknown> | unknown[] = mapping ? {} : [];
  if (parent === undefined) reading.root = value as Record<string, unknown>;
  else if (!addTo(parent, value)) return false;
  reading.stack.push({ kind: mapping ? 'mapping' : 'sequence', atKey: true, key: '', flow, flowStart: flow && reading.flowDepth === 1 ? start : -1, value });
  return true;
}

/** The map read, once every event is: one document, whose map is followed by a plain epilogue. */
function rootOf(reading: Reading): Record<string, unknown> | undefined {
  const { documents, root, emptyLast, text, end } = reading;
  if (documents !== 1 || root === undefined || !matchesAround(emptyLast ? EPILOGUE_AFTER_KEY : EPILOGUE, text.slice(end))) return undefined;
  return root;
}
