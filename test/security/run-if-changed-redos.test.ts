// Item: a repository's run_if_changed regex could block a worker for seconds (`^(a+)+$` against a
// 29-character path took 7.4 s with JavaScript's backtracking engine). It is matched with RE2 now.
import { describe, expect, it } from "vitest";
import { compileChangedPathPattern } from "../../src/config/changed-path-pattern.ts";
import { parseRepoConfig } from "../../src/config/load-repo-config.ts";

describe("run_if_changed", () => {
  it("matches a catastrophic pattern against long paths in linear time", () => {
    const pattern = compileChangedPathPattern("^(a+)+$");
    const started = performance.now();
    for (const length of [29, 1000, 100_000]) {
      expect(pattern.matches(`${"a".repeat(length)}!`)).toBe(false);
      expect(pattern.matches("a".repeat(length))).toBe(true);
    }
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("still selects paths as a regular expression does, and refuses what RE2 cannot match", () => {
    const pattern = compileChangedPathPattern("^go-controller/pkg/(node|ovn)/");
    expect(pattern.matches("go-controller/pkg/node/gateway.go")).toBe(true);
    expect(pattern.matches("docs/README.md")).toBe(false);
    const backreference = parseRepoConfig("run_if_changed: '(a)\\1'\n");
    expect(backreference.kind).toBe("invalid");
    if (backreference.kind === "invalid") expect(backreference.problems.join("\n")).toContain("RE2");
  });
});
