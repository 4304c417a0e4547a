/** Diagnostics as text (`file:line:col  field  message`), JSON, or GitHub workflow annotations. */
import type { Diagnostic } from './diagnostic.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import { escapeData, escapeProperty } from '../text/github-commands.ts';

export type DiagnosticFormat = 'text' | 'json' | 'github';
export const DIAGNOSTIC_FORMATS: readonly DiagnosticFormat[] = ['text', 'json', 'github'];

function textLine(d: Diagnostic): string {
  const message = d.severity === 'warning' ? `warning: ${d.message}` : d.message;
  return escapeForTerminal(`${d.file}:${d.line}:${d.column}  ${d.field || '-'}  ${message}`);
}

function githubLine(d: Diagnostic): string {
  // The job log shows terminal sequences: the same visible escapes as on a terminal, then the workflow-command escapes.
  const properties = [`file=${escapeProperty(escapeForTerminal(d.file))}`, `line=${d.line}`, `col=${d.column}`];
  if (d.field) properties.push(`title=${escapeProperty(escapeForTerminal(d.field))}`);
  return `::${d.severity === 'warning' ? 'warning' : 'error'} ${properties.join(',')}::${escapeData(escapeForTerminal(d.message))}`;
}

export function formatDiagnostics(diagnostics: readonly Diagnostic[], format: DiagnosticFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(diagnostics, null, 2)}\n`;
    case 'github':
      return diagnostics.map((d) => `${githubLine(d)}\n`).join('');
    case 'text':
      return diagnostics.map((d) => `${textLine(d)}\n`).join('');
  }
}
