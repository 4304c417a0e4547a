/**
 * Escaping for GitHub Actions workflow commands (`::error file=...::message`):
 * https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions
 */

/** The message after `::`. */
export function escapeData(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** A property value (`file=`, `title=`): also `:` and `,`, which separate properties. */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}
