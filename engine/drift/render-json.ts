import type { DriftReport } from './types.ts';

/** The drift report as written by `--format json` and `--report FILE`: two-space indent, one trailing newline. */
export function renderDriftJson(report: DriftReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
