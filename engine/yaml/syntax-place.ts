/**
 * Where a YAML syntax mistake starts, for the errors the `yaml` package reports where it noticed
 * them instead: a quote never closed is noticed at the end of the file (a quoted value may span
 * lines), and a line indented too deep under a key that has its value is noticed on the line above.
 * Pure: the package's first errors, its tokens and the text in; an offset and a message out.
 */
import type { CST } from 'yaml';

export interface YamlSyntaxError {
  readonly code: string;
  readonly message: string;
  readonly pos: readonly [number, number];
}

export interface MistakePlace {
  readonly offset: number;
  readonly message: string;
  /** How many of the errors it says (the first, or the two the package reports for one mistake). */
  readonly errors: number;
}

/** The place and words of the first syntax error, moved to where the mistake starts when the package's place is not it. */
export function mistakePlace(errors: readonly YamlSyntaxError[], tokens: readonly CST.Token[], text: string): MistakePlace {
  const [first, second] = errors;
  if (first!.code === 'MISSING_CHAR' && /closing .?quote/.test(first!.message)) {
    const opened = openingQuote(tokens, first!.pos[0]);
    if (opened !== undefined)
      return {
        offset: opened,
        message: `${first!.message}: the quote opened here is never closed (a quoted value runs on, across lines, to its closing quote)`,
        errors: 1,
      };
  }
  // `key: value` then a line indented deeper: the package reads the value as a key spanning lines.
  if (first!.code === 'BLOCK_AS_IMPLICIT_KEY' && second?.code === 'MULTILINE_IMPLICIT_KEY' && second.pos[0] === first!.pos[0]) {
    const deeper = nextLineStart(text, first!.pos[0], second.pos[1]);
    if (deeper !== undefined) {
      const above = lineOf(text, first!.pos[0]);
      return {
        offset: deeper,
        message: `this line is indented deeper than line ${above}, whose key has its value already: indent it as the keys beside it`,
        errors: 2,
      };
    }
  }
  // Noticed at the start of a line before it (spaces, or a comment): said at the key whose indentation is wrong.
  if (first!.code === 'BAD_INDENT') return { offset: firstContent(text, first!.pos[0]), message: first!.message, errors: 1 };
  return { offset: first!.pos[0], message: first!.message, errors: 1 };
}

/** The offset of the quoted scalar that runs to `offset` (the last one opened before it). */
function openingQuote(tokens: readonly CST.Token[], offset: number): number | undefined {
  let found: number | undefined;
  const stack: CST.Token[] = [...tokens];
  while (stack.length > 0) {
    const token = stack.pop()!;
    switch (token.type) {
      case 'document':
        if (token.value) stack.push(token.value);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        for (const item of token.items) {
          if (item.key) stack.push(item.key);
          if (item.value) stack.push(item.value);
        }
        break;
      case 'double-quoted-scalar':
      case 'single-quoted-scalar':
        if (token.offset <= offset && offset <= token.offset + token.source.length && (found === undefined || token.offset > found)) found = token.offset;
        break;
      default:
        break;
    }
  }
  return found;
}

/** 1-based line of `offset`. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line += 1;
  return line;
}

/** The first character that is not a space of the first non-blank line after the line of `from`, when it starts before `until`. */
function nextLineStart(text: string, from: number, until: number): number | undefined {
  for (let newline = text.indexOf('\n', from); newline !== -1 && newline < until; newline = text.indexOf('\n', newline + 1)) {
    let start = newline + 1;
    while (text[start] === ' ') start += 1;
    if (start < text.length && text[start] !== '\n' && text[start] !== '\r' && text[start] !== '#') return start < until ? start : undefined;
  }
  return undefined;
}

/** The first character from `offset` on that is neither a space, a line break nor in a comment. */
function firstContent(text: string, offset: number): number {
  let at = offset;
  while (at < text.length) {
    if (text[at] === ' ' || text[at] === '\n' || text[at] === '\r') at += 1;
    else if (text[at] === '#' && (at === 0 || /\s/.test(text[at - 1]!))) {
      const newline = text.indexOf('\n', at);
      if (newline === -1) return offset;
      at = newline + 1;
    } else return at;
  }
  return offset;
}
