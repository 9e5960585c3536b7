import { describe, expect, it } from "vitest";
import { releaseRollback } from "../../src/payload/release-rollback.ts";

describe("whether moving a cluster between two releases rolls it back", () => {
  it("says so for an older version core, with both names", () => {
    expect(releaseRollback("4.22.0-0.nightly-2026-12-01-123456", "4.21.9")).toBe(
      "4.21.9 is an older release than 4.22.0-0.nightly-2026-12-01-123456, and OpenShift does not roll a cluster back",
    );
    expect(releaseRollback("4.22.3", "4.22.1")).toContain("is an older release");
  });

  it("does not for a newer or equal core, whatever streams the pre-release parts name", () => {
    expect(releaseRollback("4.21.9", "4.22.0-0.nightly-2026-12-01-123456")).toBeUndefined();
    // A PR payload built on a nightly sorts below it as a semantic version; it is the same release.
    expect(
      releaseRollback(
        "4.22.0-0.nightly-2026-12-01-123456",
        "4.22.0-0.ci.test-2026-12-02-000000-ci-op-abc-latest",
      ),
    ).toBeUndefined();
    expect(
      releaseRollback("4.22.0-0.nightly-2026-12-02-000000", "4.22.0-0.nightly-2026-12-01-000000"),
    ).toBeUndefined();
  });

  it("cannot tell for names that are not versions, and does not refuse them", () => {
    expect(releaseRollback("sample-release", "4.21.0")).toBeUndefined();
    expect(releaseRollback("4.22.0", "latest")).toBeUndefined();
  });
});
