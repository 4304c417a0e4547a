/**
 * Escaping for the markdown renderers (plan and drift reports, the PR comment): text from files and
 * the service never becomes markup, a link, an image, a mention or a heading. Pure.
 */
import { escapeForTerminal } from './text-escape.ts';

export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/**
 * Markdown table cells and inline text. Control, bidi and zero-width characters are shown as
 * visible escapes first (a newline can then not start a heading or a list); HTML and every
 * character that could start markup (`[`, `*`, `_`, `#`, `|`, a backtick, backslash) are escaped (`![` is then no image); and what
 * GitHub turns into links after parsing (`@team` mentions, `https://` and `www.` autolinks, `#12`
 * issue references) is broken by a zero-width space entity after the `@`, `:`, `www` or `#`.
 */
/**
 * Inline code showing `text` as it is (a contract id), with control, bidi and zero-width characters
 * made visible as everywhere else: fenced by more backticks than any run of them inside, and padded
 * with a space then (CommonMark strips one from each side), so no id can close the span early.
 */
export function codeSpan(text: string): string {
  const shown = escapeForTerminal(text);
  if (!shown.includes('`')) return `\`${shown}\``;
  let longest = 0;
  for (const run of shown.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(longest + 1);
  return `${fence} ${shown} ${fence}`;
}

export function escapeInline(text: string): string {
  return escapeHtml(escapeForTerminal(text))
    .replace(/([\\`*_[\]|#~])/g, '\\$1')
    .replaceAll('\\#', '\\#&#8203;')
    .replaceAll('@', '@&#8203;')
    .replaceAll('://', ':&#8203;//')
    .replace(/\bwww\./gi, (match) => `${match.slice(0, 3)}&#8203;.`);
}
