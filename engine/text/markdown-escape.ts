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
export function escapeInline(text: string): string {
  return escapeHtml(escapeForTerminal(text))
    .replace(/([\\`*_[\]|#~])/g, '\\$1')
    .replaceAll('\\#', '\\#&#8203;')
    .replaceAll('@', '@&#8203;')
    .replaceAll('://', ':&#8203;//')
    .replace(/\bwww\./gi, (match) => `${match.slice(0, 3)}&#8203;.`);
}
