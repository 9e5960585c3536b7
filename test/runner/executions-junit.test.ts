import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ExecutionsJunit } from "../../src/runner/executions-junit.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { makeRecord } from "../analysis/make-records.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

const record = (overrides: Partial<ResultRecord>): ResultRecord =>
  makeRecord({ name: "[sig-network] pods reach services", duration: 1500, ...overrides });

describe("ExecutionsJunit", () => {
  it("joins interleaved arms into one suite each, in the order the arms first reported, with their counts", async () => {
    const junitPath = join(dir.path, "junit.xml");
    const junit = new ExecutionsJunit({ junitPath, arch: "arm64" });
    junit.add(record({ arm: "baseline", iteration: 0 }));
    junit.add(
      record({ arm: "pr", iteration: 0, result: "failed", error: "timeout <5s>", output: "dial & fail" }),
    );
    junit.add(record({ arm: "pr", iteration: 0, attempt: 1 }));
    junit.add(record({ arm: "baseline", iteration: 1, result: "skipped", output: "no IPv6" }));
    await junit.finish();

    const xml = await readFile(junitPath, "utf8");
    const suites = [
      ...xml.matchAll(
        /<testsuite name="([^"]+)" tests="(\d+)" failures="(\d+)" errors="0" skipped="(\d+)" time="([\d.]+)">([\s\S]*?)<\/testsuite>/g,
      ),
    ];
    expect(suites.map((s) => s.slice(1, 6))).toEqual([
      ["network-stress baseline (arm64)", "2", "0", "1", "3"],
      ["network-stress pr (arm64)", "2", "1", "0", "3"],
    ]);
    const [baseline, pr] = suites.map((s) => s[6]!);
    expect(baseline).toContain(
      'name="[sig-network] pods reach services [iteration 1]" classname="baseline.ovn-kubernetes"',
    );
    expect(baseline).toContain('<skipped message="no IPv6"/>');
    expect(pr).toContain('<failure message="timeout &lt;5s&gt;">dial &amp; fail</failure>');
    expect(pr).toContain("[iteration 0 retry 1]");
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')).toBe(true);
    expect(xml.endsWith("</testsuites>\n")).toBe(true);
    // Only junit.xml is left: the parts are gone.
    expect(await readdir(dir.path)).toEqual(["junit.xml"]);
  });

  it("keeps every testcase of a run whose suites outgrow the part files' write batches", async () => {
    const junitPath = join(dir.path, "junit.xml");
    const junit = new ExecutionsJunit({ junitPath, arch: "amd64" });
    for (let i = 0; i < 3000; i++) {
      junit.add(
        record({
          arm: i % 3 === 0 ? "baseline" : "pr",
          iteration: i,
          ...(i % 10 === 0 ? { result: "failed" as const, output: `${"x".repeat(500)} #${i}` } : {}),
        }),
      );
    }
    await junit.finish();
    const xml = await readFile(junitPath, "utf8");
    expect(xml.match(/<testcase /g)).toHaveLength(3000);
    expect(xml.match(/<failure /g)).toHaveLength(300);
    for (const i of [0, 1, 1500, 2990, 2999]) expect(xml).toContain(`[iteration ${i}]`);
    expect(xml).toContain(`${"x".repeat(500)} #2990</failure>`);
    expect(await readdir(dir.path)).toEqual(["junit.xml"]);
  });

  it("writes an empty document for a run without records", async () => {
    const junitPath = join(dir.path, "junit.xml");
    await new ExecutionsJunit({ junitPath, arch: "amd64" }).finish();
    expect(await readFile(junitPath, "utf8")).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n</testsuites>\n',
    );
  });

  it("leaves nothing behind when discarded (a failed run has no junit.xml)", async () => {
    const junit = new ExecutionsJunit({ junitPath: join(dir.path, "junit.xml"), arch: "amd64" });
    junit.add(record({ arm: "pr" }));
    junit.add(record({ arm: "baseline" }));
    await junit.discard();
    expect(await readdir(dir.path)).toEqual([]);
  });

  it("keeps newlines, carriage returns and tabs of failure and skip messages through an XML parser", async () => {
    const junitPath = join(dir.path, "junit.xml");
    const junit = new ExecutionsJunit({ junitPath, arch: "amd64" });
    const error = "Expected\n\t<int>: 1\r\nto equal\n\t<int>: 2";
    junit.add(record({ arm: "pr", result: "failed", error, output: "line one\r\nline two" }));
    junit.add(record({ arm: "pr", iteration: 1, result: "skipped", output: "no IPv6:\n\tsingle stack" }));
    await junit.finish();
    const xml = await readFile(junitPath, "utf8");
    expect(parsedAttribute(xml, "failure", "message")).toBe(error);
    expect(parsedAttribute(xml, "skipped", "message")).toBe("no IPv6:\n\tsingle stack");
    // Text keeps its newlines; a carriage return, which a parser would read as one, is a reference.
    expect(xml).toContain(">line one&#13;\nline two</failure>");
  });
});

/**
 * An attribute's value as an XML parser reports it: literal tabs, newlines and carriage returns
 * become spaces (attribute-value normalization); character and entity references are decoded.
 */
function parsedAttribute(xml: string, element: string, attribute: string): string | undefined {
  const raw = new RegExp(`<${element} [^>]*?${attribute}="([^"]*)"`).exec(xml)?.[1];
  return raw
    ?.replace(/[\t\n\r]/g, " ")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}
