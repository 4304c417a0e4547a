/** Escaping for the markdown renderers (plan and drift reports): text from files and the service must not become markup. Pure. */

export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** Markdown table cells and inline text: characters that would end a cell or start markup. */
export function escapeInline(text: string): string {
  return escapeHtml(text).replace(/([\\`*_[\]|#~])/g, '\\$1');
}
