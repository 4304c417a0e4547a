// Prints vitest's JSON report as one plain line: "N passed, N failed[, N skipped]".
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'reports/vitest.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('tests: 0 passed, 1 failed (no test report: typecheck, lint or vitest failed before reporting)');
  process.exit(1);
}
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(report.numFailedTests > 0 || report.numPassedTests === 0 ? 1 : 0);
