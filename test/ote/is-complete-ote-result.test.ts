import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCompleteOteResult } from "../../src/ote/is-complete-ote-result.ts";
import { parseRunTestOutput } from "../../src/ote/parse-run-test-output.ts";
import { oteResultSchema } from "../../src/ote/schemas.ts";
import { expectAcceptsWhatSchemaKeeps, mostly, withStrayKeys } from "../helpers/fast-check-schema.ts";

const timestamp = mostly(
  fc.tuple(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }), fc.nat(999_999_999)).map(
    ([d, ns]) =>
      `${d.toISOString().slice(0, 19).replace("T", " ")}.${String(ns)
        .padStart(9, "0")
        .slice(0, 1 + (ns % 9))} UTC`,
  ),
  "2026-01-01 00:00:00 UTC",
  "2026-01-01T00:00:00Z",
  "2026-01-01 00:00:00.1234567890 UTC",
  "",
  7,
);

const candidate = withStrayKeys(
  fc.record(
    {
      name: mostly(fc.string({ minLength: 1 }), "", 7, null),
      lifecycle: mostly(fc.constantFrom("blocking", "informing"), "Blocking", "", 1),
      duration: mostly(fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true })), -1, "12", null, Infinity, NaN),
      startTime: timestamp,
      endTime: timestamp,
      result: mostly(fc.constantFrom("passed", "failed", "skipped"), "flaky", "PASSED", 0),
      output: mostly(fc.string(), 3, null, false),
      error: mostly(fc.string(), 3, null),
      details: fc.jsonValue(),
    },
    { requiredKeys: ["name", "lifecycle", "duration", "result", "output"] },
  ),
);

describe("isCompleteOteResult", () => {
  it("accepts exactly the results the schema accepts unchanged (no defaults to fill)", () => {
    expectAcceptsWhatSchemaKeeps({ check: isCompleteOteResult, schema: oteResultSchema, candidate });
  });

  it("leaves a result without lifecycle or output to the schema, which fills them in", () => {
    const line = JSON.stringify({ name: "[sig-network] t", duration: 3, result: "passed" });
    expect(isCompleteOteResult(JSON.parse(line))).toBe(false);
    expect(parseRunTestOutput([line]).results.get("[sig-network] t")).toMatchObject({
      lifecycle: "blocking",
      output: "",
    });
  });
});
