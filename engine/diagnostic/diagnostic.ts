/** A problem found in a file the user wrote, with its position. Validation returns these; it never throws. */
export interface Diagnostic {
  readonly severity: 'error' | 'warning';
  /** Stable, machine-readable: `schema`, `duplicate-contract`, `yaml-syntax`, ... */
  readonly code: string;
  /** Repository-relative path (or the path as given, for files outside the repository). */
  readonly file: string;
  /** 1-based; 1:1 when the problem is the whole file. */
  readonly line: number;
  readonly column: number;
  /** The field it is about, relative to its contract where there is one: `Company[1].Id`. */
  readonly field: string;
  readonly message: string;
  readonly tenant?: string;
  readonly contractId?: string;
}

export function isError(diagnostic: Diagnostic): boolean {
  return diagnostic.severity === 'error';
}

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column;
}
