import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { judgeIteration } from "../../src/farm/judge-iteration.ts";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const MESSAGE = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.";

const unschedulablePod = (sinceSeconds: number, changes: Partial<V1Pod["spec"]> = {}): V1Pod =>
  ({
    metadata: { name: "p" },
    spec: { containers: [], ...changes },
    status: {
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: MESSAGE,
          // As a watch delivers it: the API's string, not a Date.
          lastTransitionTime: new Date(NOW - sinceSeconds * 1000).toISOString(),
        },
      ],
    },
  }) as unknown as V1Pod;

const judge = (pod: V1Pod) =>
  judgeIteration({ job: undefined, pods: [pod], now: NOW, unschedulableMs: 600_000 });

describe("judging an unschedulable pod", () => {
  it("waits while the scheduler has failed for less than the limit", () => {
    expect(judge(unschedulablePod(599))).toEqual({ kind: "pending" });
  });

  it("gives it up at the limit, to be run on another cluster, quoting the scheduler", () => {
    expect(judge(unschedulablePod(600))).toEqual({
      kind: "lost",
      retry: true,
      elsewhere: true,
      reason: `no node could take the pod for 600 s: ${MESSAGE}`,
    });
  });

  it("ignores a stale condition once the pod has a node, and a condition without a time", () => {
    expect(judge(unschedulablePod(3600, { nodeName: "n1" }))).toEqual({ kind: "pending" });
    const untimed = unschedulablePod(3600);
    delete untimed.status!.conditions![0]!.lastTransitionTime;
    expect(judge(untimed)).toEqual({ kind: "pending" });
  });
});
