/** `policy test` as text (a line per case, expected against found for a failure) and as JUnit XML for CI. Pure. */
import type { Diagnostic } from '../diagnostic/diagnostic.ts';
import type { Finding } from '../diagnostic/finding.ts';
import { describeException } from '../policy/finding-diagnostic.ts';
import { plural } from '../text/plural.ts';
import { escapeForTerminal } from '../text/text-escape.ts';
import type { ExpectedFinding, PolicyCaseResult } from './policy-test.ts';

function describeExpected(expected: ExpectedFinding): string {
  const parts = [expected.policy, ...(expected.action === undefined ? [] : [expected.action])];
  const message = expected.message === undefined ? '' : `: ${expected.message}`;
  const exception = expected.exception === undefined ? '' : ` (exception: ${expected.exception})`;
  return `${parts.join(' ')}${message}${exception}`;
}

function describeFound(finding: Finding): string {
  return `${finding.check} ${finding.action}: ${finding.message}${describeException(finding)}`;
}

/** What a failed case expected and what it found, one line each, for both outputs. */
function failureLines(result: PolicyCaseResult): string[] {
  return [
    ...result.missing.map((expected) => `expected, not found  ${describeExpected(expected)}`),
    ...result.unexpected.map((finding) => `found, not expected  ${describeFound(finding)}`),
  ];
}

function summary(results: readonly PolicyCaseResult[], fileErrors: number): string {
  const failed = results.filter((result) => !result.passed).length;
  const files = fileErrors > 0 ? `; ${plural(fileErrors, 'problem')} in case files` : '';
  return `${plural(results.length, 'case')}: ${results.length - failed} passed, ${failed} failed${files}\n`;
}

export function renderPolicyTestText(results: readonly PolicyCaseResult[], diagnostics: readonly Diagnostic[]): string {
  const lines = results.flatMap((result) => [
    `${result.passed ? 'PASS' : 'FAIL'}  ${result.file}:${result.line}  ${result.name}`,
    ...(result.passed ? [] : failureLines(result).map((line) => `        ${line}`)),
  ]);
  const text = lines.map((line) => `${escapeForTerminal(line)}\n`).join('');
  return `${text}${results.length > 0 ? '\n' : ''}${summary(results, diagnostics.filter((d) => d.severity === 'error').length)}`;
}

// XML 1.0 allows tab, line feed and carriage return among the control characters; the rest are dropped.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

function xml(text: string): string {
  return text.replace(NOT_XML, '').replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');
}

/** JUnit XML, as CI systems read it (GitHub, GitLab, Jenkins): a test suite per case file, a test case per case. */
export function renderPolicyTestJunit(results: readonly PolicyCaseResult[], diagnostics: readonly Diagnostic[]): string {
  const files = [...new Set([...results.map((result) => result.file), ...diagnostics.map((d) => d.file)])];
  const suites = files.map((file) => {
    const cases = results.filter((result) => result.file === file);
    const problems = diagnostics.filter((d) => d.file === file && d.severity === 'error');
    const failures = cases.filter((result) => !result.passed).length;
    const testcases = cases.map((result) => {
      const open = `    <testcase name="${xml(result.name)}" classname="${xml(file)}" file="${xml(file)}" line="${result.line}"`;
      if (result.passed) return `${open}/>`;
      const details = failureLines(result).join('\n');
      return `${open}>\n      <failure message="${xml(`${plural(result.missing.length + result.unexpected.length, 'finding')} differ`)}">${xml(details)}</failure>\n    </testcase>`;
    });
    const errors = problems.map(
      (d) =>
        `    <testcase name="${xml(`${file}:${d.line}:${d.column}`)}" classname="${xml(file)}" file="${xml(file)}" line="${d.line}">\n      <error message="${xml(d.message)}">${xml(`${d.field} ${d.message}`)}</error>\n    </testcase>`,
    );
    const tests = cases.length + errors.length;
    return [
      `  <testsuite name="${xml(file)}" tests="${tests}" failures="${failures}" errors="${errors.length}">`,
      ...testcases,
      ...errors,
      '  </testsuite>',
    ].join('\n');
  });
  const failures = results.filter((result) => !result.passed).length;
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="contract-sync policy test" tests="${results.length + errors}" failures="${failures}" errors="${errors}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
