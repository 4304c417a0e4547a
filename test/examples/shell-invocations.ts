/**
 * Finds the `contract-sync ...` command lines in CI shell text (a workflow's `run:`, a GitLab job's
 * `script:`) and turns each into the argv the shell would pass. Deliberately small: it knows
 * quotes, backslash escapes, line continuations, comments, here-documents, redirections, command
 * separators and bash arrays, which is what the examples use, and nothing else of the shell.
 */

/** What every `$VAR`, `${...}`, `$(...)` and GitHub `${{ ... }}` expression becomes. */
export const PLACEHOLDER = 'placeholder';

export type Token = { readonly kind: 'word'; readonly value: string } | { readonly kind: 'operator'; readonly value: string };

export interface Invocation {
  /** The arguments after `contract-sync`, as the shell would pass them. */
  readonly argv: readonly string[];
  /** The logical shell line (continuations joined) it was found on, for messages. */
  readonly line: string;
}

/** Longest first: `||` must not be read as two pipes. */
const OPERATORS = ['&&', '||', '>>', '<<', '>&', '<&', '|', '&', ';', '>', '<', '(', ')'] as const;
const OPERATOR_CHARS = new Set('|&;<>()');
/** Operators followed by a file (or descriptor) word that belongs to them, not to the command. */
const REDIRECTIONS = new Set(['>', '>>', '<', '>&', '<&']);
const HEREDOC = /<<-?\s*(['"]?)(\w+)\1/;
const ARRAY_ASSIGNMENT = /(?:^|[\s;])(\w+)(\+?)=\(([^)]*)\)/g;
const ARRAY_EXPANSION = /"?\$\{(\w+)\[@\]\}"?/g;
// GitHub replaces these in the script text before any shell sees it, quotes or not.
const GITHUB_EXPRESSION = /\$\{\{[\s\S]*?\}\}/g;

/** The end (exclusive) of a bracketed span opened at `start`, counting nested openers. */
function closingIndex(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let index = start; index < text.length; index += 1) {
    const char = text.charAt(index);
    if (char === open) depth += 1;
    if (char === close) depth -= 1;
    if (depth === 0) return index + 1;
  }
  throw new Error(`unbalanced "${open}" in shell text: ${text}`);
}

/** A `$` expansion starting at `start`: what it stands for here and where it ends. */
function readExpansion(text: string, start: number): { value: string; end: number } {
  const next = text.charAt(start + 1);
  if (next === '{') return { value: PLACEHOLDER, end: closingIndex(text, start + 1, '{', '}') };
  if (next === '(') return { value: PLACEHOLDER, end: closingIndex(text, start + 1, '(', ')') };
  const name = /^(?:[A-Za-z_]\w*|[0-9?$#@!*-])/.exec(text.slice(start + 1));
  if (name) return { value: PLACEHOLDER, end: start + 1 + name[0].length };
  return { value: '$', end: start + 1 };
}

/** Splits one logical shell line into words (quotes removed, expansions replaced) and operators. */
export function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  let index = 0;

  function flush(): void {
    if (inWord) tokens.push({ kind: 'word', value: word });
    word = '';
    inWord = false;
    quoted = false;
  }

  while (index < line.length) {
    const char = line.charAt(index);
    if (/\s/.test(char)) {
      flush();
      index += 1;
      continue;
    }
    if (char === '#' && !inWord) break;
    if (char === "'") {
      const end = line.indexOf("'", index + 1);
      if (end === -1) throw new Error(`unterminated single quote in shell text: ${line}`);
      word += line.slice(index + 1, end);
      inWord = true;
      quoted = true;
      index = end + 1;
      continue;
    }
    if (char === '"') {
      index = readDoubleQuoted(line, index + 1, (text) => (word += text));
      inWord = true;
      quoted = true;
      continue;
    }
    if (char === '\\') {
      word += line.charAt(index + 1);
      inWord = true;
      index += 2;
      continue;
    }
    if (char === '$') {
      const expansion = readExpansion(line, index);
      word += expansion.value;
      inWord = true;
      index = expansion.end;
      continue;
    }
    if (OPERATOR_CHARS.has(char)) {
      // `2> file`: an unquoted number right before a redirection is its descriptor, not a word.
      if ((char === '>' || char === '<') && inWord && !quoted && /^\d+$/.test(word)) {
        word = '';
        inWord = false;
      }
      flush();
      const operator = OPERATORS.find((candidate) => line.startsWith(candidate, index)) ?? char;
      tokens.push({ kind: 'operator', value: operator });
      index += operator.length;
      continue;
    }
    word += char;
    inWord = true;
    index += 1;
  }
  flush();
  return tokens;
}

/** Reads a double-quoted span whose content starts at `start`; returns the index after the closing quote. */
function readDoubleQuoted(line: string, start: number, append: (text: string) => void): number {
  let index = start;
  while (index < line.length) {
    const char = line.charAt(index);
    if (char === '"') return index + 1;
    if (char === '\\' && '"\\$`'.includes(line.charAt(index + 1))) {
      append(line.charAt(index + 1));
      index += 2;
      continue;
    }
    if (char === '$') {
      const expansion = readExpansion(line, index);
      append(expansion.value);
      index = expansion.end;
      continue;
    }
    append(char);
    index += 1;
  }
  throw new Error(`unterminated double quote in shell text: ${line}`);
}

/** The script's command lines: continuations joined, here-document bodies (input, not commands) left out. */
export function logicalLines(script: string): string[] {
  const lines: string[] = [];
  let pending = '';
  let heredocEnd: string | undefined;
  for (const raw of script.replace(GITHUB_EXPRESSION, PLACEHOLDER).split('\n')) {
    if (heredocEnd !== undefined) {
      if (raw.trim() === heredocEnd) heredocEnd = undefined;
      continue;
    }
    // An odd number of trailing backslashes continues the line; `\\` is an escaped backslash.
    const trailing = /\\*$/.exec(raw)?.[0].length ?? 0;
    if (trailing % 2 === 1) {
      pending += `${raw.slice(0, -1)} `;
      continue;
    }
    const line = pending + raw;
    pending = '';
    heredocEnd = HEREDOC.exec(line)?.[2];
    lines.push(line);
  }
  if (pending !== '') lines.push(pending);
  return lines;
}

function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Every `contract-sync` command in `script`. Bash arrays (`args=(...)`, `args+=(...)`) are
 * followed through the script, and every append counts, conditional or not: the argv then holds
 * every flag the script can pass.
 */
export function extractInvocations(script: string): Invocation[] {
  const arrays = new Map<string, string[]>();
  const invocations: Invocation[] = [];
  for (const line of logicalLines(script)) {
    for (const [, name = '', append, content = ''] of line.matchAll(ARRAY_ASSIGNMENT)) {
      const elements = tokenize(content).flatMap((token) => (token.kind === 'word' ? [token.value] : []));
      arrays.set(name, append === '+' ? [...(arrays.get(name) ?? []), ...elements] : elements);
    }
    const expanded = line.replace(ARRAY_EXPANSION, (_match, name: string) => {
      const elements = arrays.get(name);
      if (!elements) throw new Error(`array "${name}" is expanded before it is assigned: ${line}`);
      return elements.map(quote).join(' ');
    });
    invocations.push(...invocationsIn(tokenize(expanded), line));
  }
  return invocations;
}

function invocationsIn(tokens: readonly Token[], line: string): Invocation[] {
  const invocations: Invocation[] = [];
  for (const [start, token] of tokens.entries()) {
    if (token.kind !== 'word' || token.value !== 'contract-sync') continue;
    const argv: string[] = [];
    let index = start + 1;
    while (index < tokens.length) {
      const next = tokens[index];
      if (next === undefined) break;
      if (next.kind === 'word') {
        argv.push(next.value);
        index += 1;
        continue;
      }
      if (!REDIRECTIONS.has(next.value)) break;
      index += 2;
    }
    invocations.push({ argv, line: line.trim() });
  }
  return invocations;
}
