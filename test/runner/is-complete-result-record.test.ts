import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCompleteResultRecord } from "../../src/runner/is-complete-result-record.ts";
import { resultRecordSchema } from "@netstress/core/model/result-record.ts";
import { expectAcceptsWhatSchemaKeeps, mostly, withStrayKeys } from "../helpers/fast-check-schema.ts";

const field = {
  name: mostly(fc.string({ minLength: 1 }), "", 7, null),
  lifecycle: mostly(fc.constantFrom("blocking", "informing"), "Blocking", "", 1),
  duration: mostly(
    fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true })),
    -1,
    -0.5,
    "12",
    null,
    Infinity,
    NaN,
  ),
  text: mostly(fc.string(), 3, null, false),
  result: mostly(fc.constantFrom("passed", "failed", "skipped"), "flaky", "PASSED", 0),
  arm: mostly(fc.constantFrom("pr", "baseline"), "PR", ""),
  arch: mostly(fc.constantFrom("amd64", "arm64", "ppc64le", "s390x"), "x86_64", "arm"),
  count: mostly(fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER)), -1, 1.5, 2 ** 53, "3", null, -0),
  source: mostly(fc.constantFrom("override", "released"), "payload", null),
  cluster: mostly(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/), "", "-leading-dash", "has space", 3),
  harnessError: mostly(
    fc.constantFrom("no-result", "malformed-result", "timeout", "crashed", "output-limit"),
    "oom",
    "",
  ),
};

/** A JSON-like object: each field present or not, plus keys of no meaning to the schema. */
const candidate = withStrayKeys(
  fc.record(
    {
      name: field.name,
      lifecycle: field.lifecycle,
      duration: field.duration,
      startTime: field.text,
      endTime: field.text,
      result: field.result,
      output: field.text,
      error: field.text,
      details: fc.jsonValue(),
      arm: field.arm,
      arch: field.arch,
      iteration: field.count,
      attempt: field.count,
      component: field.name,
      source: field.source,
      harnessError: field.harnessError,
      cluster: field.cluster,
      originalName: field.name,
      labels: mostly(fc.array(fc.string()), [3], "Serial", null),
      tags: mostly(fc.dictionary(fc.string(), fc.string()), { area: 3 }, ["a"], null),
      specSource: field.text,
      codeLocations: mostly(fc.array(fc.string()), [null], "x.go:1"),
    },
    {
      requiredKeys: [
        "name",
        "lifecycle",
        "duration",
        "result",
        "output",
        "arm",
        "arch",
        "iteration",
        "attempt",
        "component",
      ],
    },
  ),
);

describe("isCompleteResultRecord", () => {
  it("accepts exactly the records the schema accepts unchanged (no defaults to fill)", () => {
    expectAcceptsWhatSchemaKeeps({ check: isCompleteResultRecord, schema: resultRecordSchema, candidate });
  });

  it("leaves records missing a defaulted field to the schema", () => {
    const record = {
      name: "[sig-network] t",
      lifecycle: "blocking",
      duration: 1,
      result: "passed",
      arm: "pr",
      arch: "amd64",
      iteration: 0,
      component: "sdn",
    };
    expect(isCompleteResultRecord(record)).toBe(false);
    expect(resultRecordSchema.parse(record)).toMatchObject({ output: "", attempt: 0 });
    expect(isCompleteResultRecord({ ...record, output: "", attempt: 0 })).toBe(true);
  });

  it("leaves records carrying disruption or harness notes to the schema, which checks them", () => {
    const record = {
      name: "[sig-network][Invariant] pod-to-service should stay reachable",
      lifecycle: "blocking",
      duration: 1,
      result: "passed",
      output: "",
      arm: "pr",
      arch: "amd64",
      iteration: 0,
      attempt: 0,
      component: "netstress",
    };
    const bad = { ...record, disruption: [{ path: "pod-to-service", connection: "new" }] };
    expect(isCompleteResultRecord(bad)).toBe(false);
    expect(resultRecordSchema.safeParse(bad).success).toBe(false);
    expect(isCompleteResultRecord({ ...record, harnessNotes: [7] })).toBe(false);
    expect(resultRecordSchema.safeParse({ ...record, harnessNotes: [7] }).success).toBe(false);
  });
});
