// Prints vitest's JSON reports as plain lines: one per report ("node20: N passed, N failed[, N skipped]"),
// then the sum as the closing line ("tests: N passed, N failed[, N skipped]").
// Usage: node scripts/test-summary.mjs [LABEL=]REPORT.json ... (default: reports/vitest.json)
import { readFileSync } from 'node:fs';

const reports = process.argv.length > 2 ? process.argv.slice(2) : ['reports/vitest.json'];
const total = { passed: 0, failed: 0, skipped: 0 };
let missing = false;

function line(label, { passed, failed, skipped }) {
  return `${label}: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
}

for (const argument of reports) {
  const [label, file] = argument.includes('=') ? argument.split('=', 2) : ['tests', argument];
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.log(`${label}: no test report in ${file} (typecheck, lint or vitest failed before reporting)`);
    missing = true;
    total.failed += 1;
    continue;
  }
  const counts = { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests };
  if (reports.length > 1) console.log(line(label, counts));
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}
console.log(line('tests', total));
process.exit(missing || total.failed > 0 || total.passed === 0 ? 1 : 0);
