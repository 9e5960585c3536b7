import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { disruptionSchema } from "../../src/ext/disruption.ts";
import { networkTests } from "../../src/ext/network-tests.ts";
import { LAB_PAYLOADS } from "../../src/lab/lab-payloads.ts";
import { startLab, type Lab } from "../../src/lab/start-lab.ts";
import type { OteResult } from "../../src/ote/schemas.ts";
import { labAvailable, labSkipReason } from "../lab/lab-available.ts";
import { startExtRun } from "./run-ext.ts";

const byKind = (kind: string) => networkTests().find((t) => t.kind === kind)!.name;
let pr: Lab;
let released: Lab;

const run = async (lab: Lab, names: string[], extra: Record<string, string> = {}) => {
  const { code, results } = await startExtRun({
    names,
    env: {
      ...process.env,
      KUBECONFIG: lab.kubeconfigPath,
      NETSTRESS_PROBE_INTERVAL_MS: "250",
      NETSTRESS_PROBE_TIMEOUT_MS: "800",
      // The agent flushes once its process is up, a second or two after its pod counts as Ready.
      NETSTRESS_DISRUPTION_SETTLE_SECONDS: "6",
      ...extra,
    },
  }).done;
  expect(code).toBe(0);
  return results;
};
const disruptedPaths = (result: OteResult) => {
  const detail = (result.details as { name: string; value: unknown }[]).find(
    (d) => d.name === "netstress.disruption",
  );
  return disruptionSchema
    .array()
    .parse(detail!.value)
    .filter((d) => d.disruptedSeconds > 0);
};

describe.skipIf(!labAvailable)(
  `disruptive and upgrade tests on labs (${labSkipReason.split(":")[0]})`,
  () => {
    beforeAll(async () => {
      [pr, released] = await Promise.all([
        startLab({ name: "extpr", nodes: 2, build: "pr", handleSignals: false }),
        startLab({ name: "extrel", nodes: 2, build: "released", handleSignals: false }),
      ]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([pr?.stop(), released?.stop()]);
    }, 30_000);

    it("fails the node agent restart on the PR build (its flush drops cross-node traffic) and passes it on the released one", async () => {
      const [[onPr], [onReleased]] = await Promise.all([
        run(pr, [byKind("agent-restart")]),
        run(released, [byKind("agent-restart")]),
      ]);
      expect(onPr!.result).toBe("failed");
      const broken = disruptedPaths(onPr!);
      expect(broken.map((d) => d.path)).toContain("pod-to-pod-cross-node");
      const cross = broken.find((d) => d.path === "pod-to-pod-cross-node" && d.connection === "new")!;
      expect(cross.disruptedSeconds).toBeGreaterThan(0.5);
      expect(cross.disruptedSeconds).toBeLessThan(6);
      expect(onPr!.output).toMatch(/deleted OVN-Kubernetes node agent pod openshift-ovn-kubernetes\//);
      expect(onReleased!.result, onReleased!.error).toBe("passed");
      expect(disruptedPaths(onReleased!)).toEqual([]);
    }, 180_000);

    it("moves the lab's control-plane leader without disrupting a path, and skips an upgrade without a target, saying why", async () => {
      const results = await run(released, [byKind("leader-change"), byKind("upgrade")]);
      expect(results.map((r) => r.result)).toEqual(["passed", "skipped"]);
      expect(results[0]!.output).toMatch(/deleted control-plane leader openshift-ovn-kubernetes\//);
      expect(results[1]!.output).toContain("NETSTRESS_UPGRADE_TARGET is not set");
    }, 120_000);

    it("reports the disruption of an upgrade that rolls the PR build's agent onto every node", async () => {
      const [result] = await run(released, [byKind("upgrade")], {
        NETSTRESS_UPGRADE_TARGET: LAB_PAYLOADS.pr.payload,
      });
      expect(result!.result).toBe("failed");
      expect(result!.output).toContain(`to ${LAB_PAYLOADS.pr.payload}`);
      expect(disruptedPaths(result!).map((d) => d.path)).toContain("pod-to-pod-cross-node");
    }, 180_000);
  },
);
