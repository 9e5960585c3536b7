import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatOteTimestamp } from "@netstress/core/model/format-ote-timestamp.ts";
import { parseOteTimestamp } from "../../src/ote/parse-ote-timestamp.ts";
import { parseRunTestOutput } from "../../src/ote/parse-run-test-output.ts";
import { oteSpecSchema } from "../../src/ote/schemas.ts";

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/ote/ote-list-example.json", import.meta.url), "utf8"),
) as unknown[];

describe("OTE list specs", () => {
  it("parses every spec of the real example suite, labels as a set", () => {
    const specs = fixture.map((s) => oteSpecSchema.parse(s));
    expect(specs).toHaveLength(fixture.length);
    const slow = specs.find((s) => s.name.includes("should support slow tests"));
    expect(slow?.labels).toEqual(["SLOW"]);
    expect(specs.every((s) => s.lifecycle === "blocking" || s.lifecycle === "informing")).toBe(true);
  });

  it("rejects a spec without a name", () => {
    expect(oteSpecSchema.safeParse({ labels: {}, lifecycle: "blocking" }).success).toBe(false);
  });
});

describe("run-test output", () => {
  const good = {
    name: "[sig-network] a",
    lifecycle: "blocking",
    duration: 1234,
    startTime: "2026-11-29 10:00:00.123456 UTC",
    endTime: "2026-11-29 10:00:01.357456 UTC",
    result: "passed",
    output: "ok",
  };

  it("separates result records from log noise and keeps the noise", () => {
    const parsed = parseRunTestOutput(["I1129 STEP: create pod", JSON.stringify(good), "  ", "W1129 done"]);
    expect(parsed.results.get(good.name)).toMatchObject({ result: "passed", duration: 1234 });
    expect(parsed.noise).toEqual(["I1129 STEP: create pod", "W1129 done"]);
  });

  it("counts half-written JSON lines as malformed noise, not as results", () => {
    const parsed = parseRunTestOutput(['{"name": "[sig-network] a", "result": "pas', "{not json"]);
    expect(parsed.results.size).toBe(0);
    expect(parsed.malformedLines).toBe(2);
  });

  it("reports a result record that breaks the schema under its test name", () => {
    const parsed = parseRunTestOutput([JSON.stringify({ ...good, result: "maybe", duration: "soon" })]);
    expect(parsed.results.size).toBe(0);
    expect(parsed.malformedResults.get(good.name)).toMatch(/result/);
  });

  it("treats JSON that is not a result (log objects, arrays) as noise", () => {
    const parsed = parseRunTestOutput(['{"level":"info","msg":"hi"}', "[1,2,3]"]);
    expect(parsed.results.size).toBe(0);
    expect(parsed.noise).toHaveLength(2);
  });

  it("keeps the first of duplicate results for one test", () => {
    const parsed = parseRunTestOutput([JSON.stringify(good), JSON.stringify({ ...good, result: "failed" })]);
    expect(parsed.results.get(good.name)?.result).toBe("passed");
  });

  it("rejects time stamps that are not in the OTE format", () => {
    const parsed = parseRunTestOutput([JSON.stringify({ ...good, startTime: "2026-11-29T10:00:00Z" })]);
    expect(parsed.malformedResults.get(good.name)).toMatch(/startTime/);
  });
});

describe("OTE time stamps", () => {
  it("round-trips through the OTE format at millisecond precision", () => {
    const date = new Date("2026-11-29T10:11:12.345Z");
    const text = formatOteTimestamp(date);
    expect(text).toBe("2026-11-29 10:11:12.345000 UTC");
    expect(parseOteTimestamp(text)?.getTime()).toBe(date.getTime());
  });

  it("parses microsecond and whole-second stamps and refuses others", () => {
    expect(parseOteTimestamp("2026-11-29 10:11:12.999999 UTC")?.toISOString()).toBe(
      "2026-11-29T10:11:12.999Z",
    );
    expect(parseOteTimestamp("2026-11-29 10:11:12 UTC")?.toISOString()).toBe("2026-11-29T10:11:12.000Z");
    expect(parseOteTimestamp("2026-11-29 10:11:12")).toBeUndefined();
  });
});
