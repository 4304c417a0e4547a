// Prints vitest's JSON reports as plain lines: one per report ("node20: N passed, N failed[, N skipped]"),
// then the sum as the closing line ("tests: N passed, N failed[, N skipped]").
// Each failed test is named above those lines (file, title, the first lines of its message), so that the
// tail of a CI log, which may be all that is kept, says what failed.
// Usage: node scripts/test-summary.mjs [LABEL=]REPORT.json ... (default: reports/vitest.json)
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

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
  for (const suite of report.testResults ?? []) {
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      console.log(`${label}: FAILED ${relative(process.cwd(), suite.name)} > ${test.fullName ?? test.title}`);
      const message = (test.failureMessages ?? []).join('\n').split('\n').slice(0, 6);
      for (const text of message) console.log(`    ${text}`);
    }
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0)
      console.log(`${label}: FAILED ${relative(process.cwd(), suite.name)}: ${suite.message ?? ''}`);
  }
  const counts = { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests + report.numTodoTests };
  if (reports.length > 1) console.log(line(label, counts));
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
}
console.log(line('tests', total));
process.exit(missing || total.failed > 0 || total.passed === 0 ? 1 : 0);
