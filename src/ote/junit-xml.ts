/**
 * Minimal JUnit XML pieces that CI viewers (Prow/Spyglass, Jenkins, GitHub annotations actions)
 * read: <testsuites>/<testsuite>/<testcase> with <failure>, <skipped/> and <system-out>.
 * Rendering is split into pieces so large reports can be streamed.
 */

export interface JunitTestcase {
  name: string;
  classname: string;
  /** Seconds. */
  time: number;
  failure?: { message: string; body?: string };
  skipped?: { message?: string };
  systemOut?: string;
}

export interface JunitSuiteCounts {
  name: string;
  tests: number;
  failures: number;
  skipped: number;
  /** Seconds. */
  time: number;
}

export interface JunitSuite extends Omit<JunitSuiteCounts, "tests" | "failures" | "skipped"> {
  testcases: JunitTestcase[];
}

// Characters XML 1.0 forbids even when escaped; test output is full of them (ANSI colours, NULs).
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

export function escapeXml(text: string): string {
  return text
    .replace(INVALID_XML, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

const seconds = (t: number): string => (Math.round(t * 1000) / 1000).toString();

export function renderJunitSuiteOpen(suite: JunitSuiteCounts): string {
  return (
    `  <testsuite name="${escapeXml(suite.name)}" tests="${suite.tests}" failures="${suite.failures}" ` +
    `errors="0" skipped="${suite.skipped}" time="${seconds(suite.time)}">\n`
  );
}

export const JUNIT_SUITE_CLOSE = "  </testsuite>\n";
export const JUNIT_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n';
export const JUNIT_FOOTER = "</testsuites>\n";

export function renderJunitTestcase(tc: JunitTestcase): string {
  let body = "";
  if (tc.failure) {
    body += `      <failure message="${escapeXml(tc.failure.message)}">${escapeXml(tc.failure.body ?? "")}</failure>\n`;
  }
  if (tc.skipped) {
    body += tc.skipped.message
      ? `      <skipped message="${escapeXml(tc.skipped.message)}"/>\n`
      : "      <skipped/>\n";
  }
  if (tc.systemOut) body += `      <system-out>${escapeXml(tc.systemOut)}</system-out>\n`;
  const open = `    <testcase name="${escapeXml(tc.name)}" classname="${escapeXml(tc.classname)}" time="${seconds(tc.time)}"`;
  return body ? `${open}>\n${body}    </testcase>\n` : `${open}/>\n`;
}

/** A whole JUnit document from suites held in memory. */
export function renderJunitXml(suites: readonly JunitSuite[]): string {
  let xml = JUNIT_HEADER;
  for (const suite of suites) {
    xml += renderJunitSuiteOpen({
      name: suite.name,
      time: suite.time,
      tests: suite.testcases.length,
      failures: suite.testcases.filter((t) => t.failure).length,
      skipped: suite.testcases.filter((t) => t.skipped).length,
    });
    for (const tc of suite.testcases) xml += renderJunitTestcase(tc);
    xml += JUNIT_SUITE_CLOSE;
  }
  return xml + JUNIT_FOOTER;
}
