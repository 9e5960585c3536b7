import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { listTests } from "../../src/ote/list-tests.ts";
import { executeRun } from "../../src/runner/execute-run.ts";
import { readResultRecords } from "../../src/runner/read-result-records.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { runManifestSchema } from "../../src/runner/run-manifest.ts";
import { fixtureInfo, fixtureSpec, writeProtocolFixture } from "../helpers/protocol-fixture-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const CYPRESS = "[sig-network] a spec built without Ginkgo";
const FUTURE = "[sig-network] a spec with a lifecycle from a newer framework";
const INFORMING = "[sig-network] an informing spec";
const BROKEN = "[sig-network] a spec whose labels are a list";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeProtocolFixture(join(dir.path, "framework-tests-ext"), {
    info: fixtureInfo("framework"),
    listLines: [
      "I1201 00:00:00.000000 1 list.go:1] listing",
      fixtureSpec(CYPRESS, { lifecycle: "" }),
      fixtureSpec(FUTURE, {
        lifecycle: "experimental",
        originalName: "[sig-network] its first name",
        labels: { "Feature:Routes": {}, Slow: {} },
        tags: { area: "routes" },
        codeLocations: ["/go/src/github.com/openshift/router/test/e2e/routes.go:42"],
      }),
      fixtureSpec(INFORMING, { lifecycle: "informing" }),
      fixtureSpec(BROKEN, { labels: ["Serial"] }),
      '{"name": "[sig-network] cut off',
    ],
    tests: {
      [CYPRESS]: { result: "failed", error: "expected the route to answer" },
      [FUTURE]: { result: "passed" },
      [INFORMING]: { result: "failed", error: "informing only" },
    },
  });
});
afterAll(() => dir.remove());

describe("specs as the framework lists them", () => {
  it('keeps specs with lifecycle "" or an unknown lifecycle, as blocking (origin: only "informing" spares a run)', async () => {
    const specs = await listTests({ binary });
    expect(Object.fromEntries(specs.map((s) => [s.name, s.lifecycle]))).toEqual({
      [CYPRESS]: "blocking",
      [FUTURE]: "blocking",
      [INFORMING]: "informing",
    });
  });

  it("warns about each unreadable spec line, naming it, instead of dropping it silently", async () => {
    const warnings: string[] = [];
    await listTests({ binary, onWarning: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`line 5 ("${BROKEN}")`);
    expect(warnings[0]).toContain("labels");
    expect(warnings[1]).toContain("line 6 is not JSON");
  });

  it('runs a lifecycle "" spec and counts its failure as blocking; run.json keeps the warnings', async () => {
    const notices: string[] = [];
    const { outcome, paths } = await executeRun({
      plan: { arch: hostArch(), arms: [{ arm: "pr", components: [{ component: "framework", binary }] }] },
      outDir: join(dir.path, "run"),
      iterations: 1,
      parallel: 2,
      seed: "lifecycles",
      timeoutMs: 30_000,
      retries: 0,
      env: { ...process.env, KUBECONFIG: "" },
      onNotice: (message) => notices.push(message),
    });
    const records: ResultRecord[] = [];
    for await (const r of readResultRecords(paths.results)) records.push(r);
    expect(records.map((r) => [r.name, r.lifecycle, r.result]).sort()).toEqual(
      [
        [CYPRESS, "blocking", "failed"],
        [FUTURE, "blocking", "passed"],
        [INFORMING, "informing", "failed"],
      ].sort(),
    );
    expect(outcome.blockingFailures.pr).toBe(1);
    // Records carry what list said about their spec.
    expect(records.find((r) => r.name === FUTURE)).toMatchObject({
      originalName: "[sig-network] its first name",
      labels: ["Feature:Routes", "Slow"],
      tags: { area: "routes" },
      specSource: "openshift:payload:fixture",
      codeLocations: ["/go/src/github.com/openshift/router/test/e2e/routes.go:42"],
    });
    expect(records.find((r) => r.name === CYPRESS)).not.toHaveProperty("labels");
    const manifest = runManifestSchema.parse(JSON.parse(await readFile(paths.manifest, "utf8")));
    expect(manifest.components[0]?.listWarnings?.[0]).toContain(BROKEN);
    expect(notices.some((n) => n.includes(BROKEN))).toBe(true);
  });
});
