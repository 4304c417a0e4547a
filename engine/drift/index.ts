export { attributeDrift, attributionText, type AttributionOptions, type FieldAttribution, type UnattributedReason } from './attribution.ts';
export { auditWarnings, type AuditReadOutcome, type AuditWarning } from './audit-warnings.ts';
export { classifyChange } from './classify.ts';
export { createDriftReport, driftFailed, driftRemains, type DriftReportInput } from './create-report.ts';
export { CAUSE_TEXT, driftSummaryLine } from './render-common.ts';
export { renderDriftJson } from './render-json.ts';
export { DRIFT_MARKDOWN_MAX_LENGTH, renderDriftMarkdown, type DriftMarkdownOptions } from './render-markdown.ts';
export { renderDriftText, type DriftTextOptions } from './render-text.ts';
export {
  DRIFT_CAUSES,
  DRIFT_REPORT_VERSION,
  type DriftCause,
  type DriftContract,
  type DriftError,
  type DriftFix,
  type DriftItem,
  type DriftReport,
  type DriftSummary,
  type DriftTenant,
} from './types.ts';
export { withAttributions } from './with-attributions.ts';
