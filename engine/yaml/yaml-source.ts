/**
 * Reading a YAML file that may be hostile (a pull request from a fork is planned too): size,
 * encoding, nesting and alias expansion are bounded before anything is built from it, and every
 * position can be traced back to `line:column` in the source.
 */
import { createRequire } from 'node:module';
import type * as YamlModule from 'yaml';
import type { CST, Document, LineCounter, Node, Pair, YAMLMap } from 'yaml';
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { PathSegment } from '../model/schema-validator.ts';
import { inexactNumber } from '../model/exact-number.ts';
import { plural } from '../text/plural.ts';
import { mistakePlace } from './syntax-place.ts';

export interface YamlLimits {
  /** Larger files are refused unread. */
  readonly maxBytes: number;
  /** Deeper nesting is refused before the document is composed (deep recursion can crash V8). */
  readonly maxDepth: number;
  /** The `yaml` package's guard against alias ("billion laughs") expansion. */
  readonly maxAliasCount: number;
}

let yamlModule: typeof YamlModule | undefined;

/**
 * The `yaml` package, loaded on first use: some 70 modules, which a run whose files all take the
 * fast path (engine/yaml/plain-yaml.ts) never needs.
 */
export function yamlPackage(): typeof YamlModule {
  yamlModule ??= createRequire(import.meta.url)('yaml') as typeof YamlModule;
  return yamlModule;
}

export const DEFAULT_YAML_LIMITS: YamlLimits = { maxBytes: 16 * 1024 * 1024, maxDepth: 64, maxAliasCount: 100 };

export interface Position {
  readonly line: number;
  readonly column: number;
}

export interface YamlSource {
  readonly file: string;
  readonly doc: Document.Parsed;
  readonly lineCounter: LineCounter;
  /** Each map's pairs by key, built on the first look-up in that map: look-ups stay linear in the file's size. */
  readonly pairIndex: WeakMap<YAMLMap, ReadonlyMap<string, Pair>>;
}

export type YamlParseResult =
  | { readonly ok: true; readonly source: YamlSource; readonly value: unknown; readonly diagnostics: Diagnostic[] }
  | { readonly ok: false; readonly diagnostics: Diagnostic[] };

function fileDiagnostic(
  file: string,
  code: string,
  message: string,
  severity: Diagnostic['severity'] = 'error',
  position: Position = { line: 1, column: 1 },
): Diagnostic {
  return { severity, code, file, line: position.line, column: position.column, field: '', message };
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** The text of a file, or why it is refused unparsed: too large, not UTF-8, binary. */
export function decodeYamlText(file: string, content: Uint8Array | string, limits: YamlLimits): string | Diagnostic {
  const size = typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
  if (size > limits.maxBytes) {
    return fileDiagnostic(file, 'file-too-large', `file is ${formatBytes(size)}; the limit is ${formatBytes(limits.maxBytes)}`);
  }
  let text: string;
  if (typeof content === 'string') {
    text = content;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    } catch {
      return fileDiagnostic(file, 'not-utf8', 'file is not valid UTF-8 text');
    }
  }
  if (text.includes('\0')) return fileDiagnostic(file, 'binary-file', 'file contains NUL bytes: it is binary, not YAML');
  return text;
}

/** The deepest collection nesting in a CST, walked without recursion. */
function cstDepth(tokens: readonly CST.Token[]): { depth: number; offset: number } {
  const stack: { token: CST.Token; depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  let deepest = { depth: 0, offset: 0 };
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (depth > deepest.depth) deepest = { depth, offset: 'offset' in token ? token.offset : 0 };
    switch (token.type) {
      case 'document':
        if (token.value) stack.push({ token: token.value, depth });
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        for (const item of token.items) {
          if (item.key) stack.push({ token: item.key, depth: depth + 1 });
          if (item.value) stack.push({ token: item.value, depth: depth + 1 });
        }
        break;
      default:
        break;
    }
  }
  return deepest;
}

export function parseYamlSource(file: string, content: Uint8Array | string, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlParseResult {
  const text = decodeYamlText(file, content, limits);
  if (typeof text !== 'string') return { ok: false, diagnostics: [text] };

  const { Composer, LineCounter, Parser } = yamlPackage();
  const lineCounter = new LineCounter();
  function at(offset: number): Position {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  }
  const tokens = [...new Parser(lineCounter.addNewLine).parse(text)];
  const { depth, offset } = cstDepth(tokens);
  if (depth > limits.maxDepth) {
    const message = `values are nested more than ${limits.maxDepth} levels deep`;
    return { ok: false, diagnostics: [fileDiagnostic(file, 'too-deep', message, 'error', at(offset))] };
  }

  // logLevel 'error': the yaml package would otherwise print its own warnings to stderr
  // (process.emitWarning); every problem is reported as a Diagnostic instead.
  // uniqueKeys false: the package compares each key with every earlier one (quadratic in a map's
  // keys); duplicateKeys finds the same duplicates with one set per map.
  const composer = new Composer({ uniqueKeys: false, prettyErrors: false, strict: true, logLevel: 'error' });
  const docs = [...composer.compose(tokens, true, text.length)];
  if (docs.length > 1) {
    const second = docs[1]!.range[0];
    return { ok: false, diagnostics: [fileDiagnostic(file, 'multiple-documents', 'a file holds one YAML document; found another', 'error', at(second))] };
  }
  const doc = docs[0]!;
  const diagnostics: Diagnostic[] = [];
  for (const offset of duplicateKeys(doc)) {
    diagnostics.push(fileDiagnostic(file, 'yaml-syntax', duplicateKeyMessage(text, offset), 'error', at(offset)));
  }
  // After a syntax error the parser reports every later token as unexpected: the first one is the
  // real problem, the rest only noise.
  const syntax = doc.errors.filter((error) => error.code !== 'DUPLICATE_KEY');
  if (syntax.length > 0) {
    // Said where the mistake starts (an unclosed quote's opening, the line indented too deep), not where the package noticed it.
    const place = mistakePlace(syntax, tokens, text);
    const rest = syntax.length - place.errors;
    const more = rest > 0 ? ` (and ${plural(rest, 'more error')} after it)` : '';
    diagnostics.push(fileDiagnostic(file, 'yaml-syntax', `invalid YAML: ${place.message}${more}`, 'error', at(place.offset)));
  }
  for (const warning of doc.warnings) {
    diagnostics.push(fileDiagnostic(file, 'yaml-warning', warning.message, 'warning', at(warning.pos[0])));
  }
  if (diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };
  diagnostics.push(...structureProblems(file, doc, at));
  if (diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };

  try {
    const value: unknown = doc.toJS({ maxAliasCount: limits.maxAliasCount });
    return { ok: true, source: { file, doc, lineCounter, pairIndex: new WeakMap() }, value, diagnostics };
  } catch (error) {
    // The yaml package throws on alias expansion beyond maxAliasCount and on unresolvable aliases.
    const reason = error instanceof Error ? error.message : String(error);
    const message = /alias count/i.test(reason)
      ? `aliases expand too much (more than ${limits.maxAliasCount} times their size); refusing a possible alias bomb`
      : `cannot read the YAML: ${reason}`;
    return { ok: false, diagnostics: [...diagnostics, fileDiagnostic(file, 'yaml-alias', message)] };
  }
}

/** The path of the last node of `chain` (a node's ancestry as `visit` gives it, then the node). */
function pathOf(chain: readonly unknown[]): PathSegment[] {
  const { isPair, isScalar, isSeq } = yamlPackage();
  const path: PathSegment[] = [];
  for (const [index, item] of chain.entries()) {
    const parent = chain[index - 1];
    if (isPair(item)) path.push(isScalar(item.key) ? String(item.key.value) : String(item.key));
    else if (isSeq(parent)) path.push(parent.items.indexOf(item as Node));
  }
  return path;
}

function kindOf(node: unknown): string {
  return yamlPackage().isSeq(node) ? 'a list' : 'a map';
}

const CORE_TAG_PREFIX = 'tag:yaml.org,2002:';
const COLLECTION_TAGS: ReadonlySet<string> = new Set(['map', 'seq'].map((name) => CORE_TAG_PREFIX + name));
const SCALAR_TAGS: ReadonlySet<string> = new Set(['str', 'int', 'float', 'bool', 'null'].map((name) => CORE_TAG_PREFIX + name));

/**
 * What YAML can express but JSON cannot, refused before anything is built: a map key that is a
 * list or a map (`? [a, b]`; JavaScript would silently turn it into the string "[ a, b ]"), and an
 * alias inside the very value its anchor names (`&a { Comment: *a }`), which would build a
 * circular value. An alias always names an earlier node, so a cycle can only come from an alias
 * whose anchored node is one of its own ancestors. Also what would silently change shape or value:
 * a tag other than the core ones (`contracts: !!omap [...]` would read as no contracts at all) and
 * a number that underflows to 0 (`1e-400`).
 */
function structureProblems(file: string, doc: Document.Parsed, at: (offset: number) => Position): Diagnostic[] {
  const { isAlias, isCollection, visit } = yamlPackage();
  const problems: Diagnostic[] = [];
  function checkTag(node: Node, chain: readonly unknown[], allowed: ReadonlySet<string>): boolean {
    const tag = node.tag;
    if (tag === undefined || allowed.has(tag)) return true;
    const shown = tag.startsWith(CORE_TAG_PREFIX) ? `!!${tag.slice(CORE_TAG_PREFIX.length)}` : tag;
    problem(node, [...chain, node], 'yaml-tag', `unexpected YAML tag ${shown}: only plain maps, lists, strings, numbers, booleans and null are read`);
    return false;
  }
  function problem(node: Node, chain: readonly unknown[], code: string, message: string): void {
    const { line, column } = at(node.range?.[0] ?? 0);
    problems.push({ severity: 'error', code, file, line, column, field: formatPath(pathOf(chain)), message });
  }
  visit(doc, {
    Pair(_, pair, ancestry) {
      const key = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
      if (!isCollection(key)) return undefined;
      problem(pair.key as Node, ancestry, 'complex-key', `a map key must be a plain name or number, got ${kindOf(key)}`);
      return visit.SKIP;
    },
    Map(_, map, ancestry) {
      return checkTag(map, ancestry, COLLECTION_TAGS) ? undefined : visit.SKIP;
    },
    Seq(_, seq, ancestry) {
      return checkTag(seq, ancestry, COLLECTION_TAGS) ? undefined : visit.SKIP;
    },
    Scalar(_, scalar, ancestry) {
      if (!checkTag(scalar, ancestry, SCALAR_TAGS)) return;
      if (typeof scalar.value !== 'number' || typeof scalar.source !== 'string') return;
      const inexact = inexactNumber(scalar.source, scalar.value);
      if (inexact !== undefined) problem(scalar, [...ancestry, scalar], 'inexact-number', inexact);
    },
    Alias(_, alias, ancestry) {
      const target = alias.resolve(doc);
      if (target === undefined || !ancestry.includes(target)) return;
      problem(alias, [...ancestry, alias], 'yaml-alias', `alias *${alias.source} is inside the value it names: circular values are not allowed`);
    },
  });
  return problems;
}

/** Where each key that repeats an earlier key of its map starts, as the `yaml` package's uniqueKeys finds them (scalars by value). */
function duplicateKeys(doc: Document.Parsed): number[] {
  const { isMap, isScalar, visit } = yamlPackage();
  const offsets: number[] = [];
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return;
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value) && !Number.isNaN(pair.key.value)) offsets.push(pair.key.range?.[0] ?? 0);
        seen.add(pair.key.value);
      }
    },
  });
  return offsets.sort((a, b) => a - b);
}

function duplicateKeyMessage(text: string, offset: number): string {
  const key = /^[^:\n]*/.exec(text.slice(offset))![0].trim();
  return `duplicate key ${key.length > 0 && key.length < 100 ? key : ''}: each key may appear once in a map`.replace('  ', ' ');
}

/** The first pair of map `node` whose key reads as `segment`. */
function findPair(node: Node, segment: PathSegment, source: YamlSource): Pair | undefined {
  const { isAlias, isMap, isScalar } = yamlPackage();
  if (!isMap(node)) return undefined;
  let pairs = source.pairIndex.get(node);
  if (pairs === undefined) {
    const index = new Map<string, Pair>();
    for (const pair of node.items) {
      const key = isAlias(pair.key) ? pair.key.resolve(source.doc) : pair.key;
      if (!isScalar(key)) continue;
      const name = String(key.value);
      if (!index.has(name)) index.set(name, pair);
    }
    source.pairIndex.set(node, index);
    pairs = index;
  }
  return pairs.get(String(segment));
}

/**
 * The position of `path` in the source: its value, or with `atKey` its key. Falls back to the
 * deepest existing ancestor, so a missing field points at the map that should hold it.
 */
export function positionOf(source: YamlSource, path: readonly PathSegment[], atKey = false): Position {
  const { isAlias, isSeq } = yamlPackage();
  const { doc, lineCounter } = source;
  let node: Node | null = doc.contents;
  let offset = node?.range?.[0] ?? 0;
  for (const [index, segment] of path.entries()) {
    if (node === null) break;
    if (isAlias(node)) node = node.resolve(doc) ?? null;
    if (node === null) break;
    let next: Node | null | undefined;
    if (isSeq(node) && typeof segment === 'number') {
      next = node.items[segment] as Node | undefined;
    } else {
      const pair = findPair(node, segment, source);
      if (pair && atKey && index === path.length - 1) {
        offset = (pair.key as Node).range?.[0] ?? offset;
        break;
      }
      next = pair?.value as Node | null | undefined;
    }
    if (!next) break;
    node = next;
    offset = node.range?.[0] ?? offset;
  }
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** The key node of `path`'s last segment (a map key), e.g. to read how a ContractId was written. */
export function keyNodeAt(source: YamlSource, path: readonly PathSegment[]): Node | undefined {
  let node: Node | null = source.doc.contents;
  for (const [index, segment] of path.entries()) {
    if (node === null) return undefined;
    const pair = findPair(node, segment, source);
    if (!pair) return undefined;
    if (index === path.length - 1) return pair.key as Node;
    node = pair.value as Node | null;
  }
  return undefined;
}

/** `['Company', 1, 'Id']` -> `Company[1].Id`; odd keys are quoted: `contracts["a b"]`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$|^[0-9][A-Za-z0-9_-]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

export interface SchemaProblem {
  readonly path: readonly PathSegment[];
  readonly atKey?: boolean;
  readonly code: string;
  readonly message: string;
  readonly severity?: Diagnostic['severity'];
}

/** A problem at a path of a YAML source as a Diagnostic with its line and column. */
export function diagnosticAt(
  source: YamlSource,
  problem: SchemaProblem,
  describe: (path: readonly PathSegment[]) => Pick<Diagnostic, 'field'> & Partial<Diagnostic> = (path) => ({ field: formatPath(path) }),
): Diagnostic {
  const { line, column } = positionOf(source, problem.path, problem.atKey);
  return {
    severity: problem.severity ?? 'error',
    code: problem.code,
    file: source.file,
    line,
    column,
    message: problem.message,
    ...describe(problem.path),
  };
}

/** The first lone surrogate of `text` (a UTF-16 half with no partner): its code unit and 1-based character position. */
const SURROGATE = /[\ud800-\udfff]/;

/** Whether any string in `value` holds a UTF-16 surrogate (paired or not). */
function hasSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return SURROGATE.test(value);
  if (value === null || typeof value !== 'object') return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (hasSurrogate(item)) return true;
  return false;
}

function loneSurrogate(text: string): { unit: number; character: number } | undefined {
  if (!SURROGATE.test(text)) return undefined;
  let character = 0;
  for (let index = 0; index < text.length; index++) {
    character += 1;
    const unit = text.charCodeAt(index);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(index + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      index += 1;
      continue;
    }
    return { unit, character };
  }
  return undefined;
}

/**
 * Strings holding a lone surrogate (`"\ud800"` in a double-quoted scalar): not Unicode text, so
 * JSON encoders and the service would mangle or refuse them. Values only: every key is a field
 * name or an id, which the schema already restricts to ASCII. `value` is acyclic (see structureProblems).
 */
export function loneSurrogateProblems(value: unknown, path: readonly PathSegment[] = []): SchemaProblem[] {
  // Nearly every file has no surrogate at all: said without building a path for every value.
  if (path.length === 0 && !hasSurrogate(value)) return [];
  if (typeof value === 'string') {
    const found = loneSurrogate(value);
    if (!found) return [];
    const unit = `\\u${found.unit.toString(16).padStart(4, '0')}`;
    return [{ path, code: 'lone-surrogate', message: `expected valid Unicode text, got a lone surrogate ${unit} at character ${found.character}` }];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => loneSurrogateProblems(item, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => loneSurrogateProblems(item, [...path, key]));
  }
  return [];
}

/**
 * `parse()`, or for a file that still exhausts the call stack somewhere in a parser (a shape no
 * limit above foresaw), one error naming the file instead of a crash of the whole run.
 */
export function withinStack<T extends { diagnostics: Diagnostic[] }>(file: string, parse: () => T): T | { diagnostics: Diagnostic[] } {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { diagnostics: [fileDiagnostic(file, 'too-complex', 'the file is too deeply nested or too large for its structure to be read')] };
  }
}
