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

/**
 * An attribute value: XML parsers turn a literal newline, carriage return or tab in an attribute
 * into a space, so a multi-line failure message would arrive as one line. Character references
 * survive, and are what Go's encoding/xml (the upstream JUnit writers) emits.
 */
function escapeXmlAttribute(text: string): string {
  return escapeXml(text).replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

/** Text content: a parser reads a literal carriage return as a newline; the reference keeps it. */
function escapeXmlText(text: string): string {
  return escapeXml(text).replace(/\r/g, "&#13;");
}

const seconds = (t: number): string => (Math.round(t * 1000) / 1000).toString();

export function renderJunitSuiteOpen(suite: JunitSuiteCounts): string {
  return (
    `  <testsuite name="${escapeXmlAttribute(suite.name)}" tests="${suite.tests}" failures="${suite.failures}" ` +
    `errors="0" skipped="${suite.skipped}" time="${seconds(suite.time)}">\n`
  );
}

export const JUNIT_SUITE_CLOSE = "  </testsuite>\n";
export const JUNIT_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n';
export const JUNIT_FOOTER = "</testsuites>\n";

export function renderJunitTestcase(tc: JunitTestcase): string {
  let body = "";
  if (tc.failure) {
    body += `      <failure message="${escapeXmlAttribute(tc.failure.message)}">${escapeXmlText(tc.failure.body ?? "")}</failure>\n`;
  }
  if (tc.skipped) {
    body += tc.skipped.message
      ? `      <skipped message="${escapeXmlAttribute(tc.skipped.message)}"/>\n`
      : "      <skipped/>\n";
  }
  if (tc.systemOut) body += `      <system-out>${escapeXmlText(tc.systemOut)}</system-out>\n`;
  const open = `    <testcase name="${escapeXmlAttribute(tc.name)}" classname="${escapeXmlAttribute(tc.classname)}" time="${seconds(tc.time)}"`;
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
