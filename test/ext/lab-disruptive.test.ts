import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { disruptionSchema } from "@netstress/core/model/disruption-schema.ts";
import { networkTests } from "@netstress/network-extension/network-tests.ts";
import { LAB_PAYLOADS } from "@netstress/testbed/lab/lab-payloads.ts";
import { PROBE_IMAGE, startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import type { OteResult } from "../../src/ote/schemas.ts";
import { labAvailable, labSkipReason } from "../lab/lab-available.ts";
import { labName, startExtRun } from "./run-ext.ts";

const byKind = (kind: string) => networkTests().find((t) => t.kind === kind)!.name;
let pr: Lab;
let released: Lab;

const run = async (lab: Lab, names: string[], extra: Record<string, string> = {}) => {
  const { code, results } = await startExtRun({
    names,
    env: {
      ...process.env,
      KUBECONFIG: lab.kubeconfigPath,
      NETSTRESS_PROBE_IMAGE: PROBE_IMAGE,
      NETSTRESS_PROBE_INTERVAL_MS: "250",
      // A probe is answered on loopback veths in milliseconds; 800 ms made a loaded machine's
      // stalled probers report every path down at once. A dropped route answers at no timeout.
      NETSTRESS_PROBE_TIMEOUT_MS: "2000",
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
      // One after the other: each lab process has 30 s to say it is ready, and two labs starting
      // at once on a loaded machine left their node helpers past it.
      pr = await startLab({ name: labName("extpr"), nodes: 2, build: "pr", handleSignals: false });
      released = await startLab({
        name: labName("extrel"),
        nodes: 2,
        build: "released",
        handleSignals: false,
      });
    }, 240_000);
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

    it("moves the control-plane leader without disruption on the released lab, right after another test's probes were there", async () => {
      // Probe pods of the test before have just gone: the new ones must not inherit their addresses' stale neighbours.
      const [leader] = await run(released, [byKind("leader-change")]);
      expect(leader!.result, leader!.error).toBe("passed");
      expect(leader!.output).toMatch(
        /deleted control-plane leader openshift-ovn-kubernetes\/\S+ \(lease ovn-kubernetes-master\)/,
      );
      expect(disruptedPaths(leader!)).toEqual([]);
    }, 120_000);

    it("skips the upgrade test without a target, saying why", async () => {
      const [upgrade] = await run(released, [byKind("upgrade")]);
      expect(upgrade!.result).toBe("skipped");
      expect(upgrade!.output).toContain("NETSTRESS_UPGRADE_TARGET is not set");
    }, 60_000);

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
