/**
 * What reaches people is inert (docs/architecture.md, "Output is inert"). Pure. Text from files
 * and the service (file names, values, messages) may hold characters that act instead of showing:
 * terminal control sequences (ESC, CSI U+009B, a carriage return that overwrites the line),
 * bidirectional overrides that reorder what is read, zero-width characters that hide a difference.
 * Each is shown as a visible escape: `\e`, `\r`, `\n`, `\t`, else `\uXXXX` (`\u202e`, `\u200b`).
 */

/** C0 and C1 controls, DEL, and the characters that change display without being seen. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ACTIVE = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/g;

/** The same characters, to test for (no `g`: nothing to reset between calls). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ANY_ACTIVE = /[\u0000-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/;

const NAMED: Readonly<Record<string, string>> = { '\u001B': '\\e', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visibleEscape(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every control, bidi and zero-width character shown as a visible escape. */
export function escapeForTerminal(text: string): string {
  // Most text has none: tested first, it is given back as it is (every value of every planned contract comes here).
  return ANY_ACTIVE.test(text) ? text.replace(ACTIVE, visibleEscape) : text;
}

/**
 * `value` as JSON, with what JSON leaves raw (C1 controls, bidi and zero-width characters) made
 * visible too: the one way a value is shown, in a member's label (`RelationType "\u009b31m"`) as
 * beside it.
 */
export function quoteForDisplay(value: unknown): string {
  return escapeForTerminal(JSON.stringify(value) ?? String(value));
}

/** Whether `text` holds a character escapeForTerminal would make visible: a control, bidi or zero-width one. */
export function hasActiveCharacter(text: string): boolean {
  return ANY_ACTIVE.test(text);
}
