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

const judge = (pod: V1Pod) => judgeIteration({ job: undefined, pods: [pod], now: NOW, pendingMs: 600_000 });

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

  it("ignores a pod that is no longer Pending, and a condition without a time", () => {
    const running = unschedulablePod(3600);
    running.status!.phase = "Running";
    expect(judge(running)).toEqual({ kind: "pending" });
    const untimed = unschedulablePod(3600);
    delete untimed.status!.conditions![0]!.lastTransitionTime;
    expect(judge(untimed)).toEqual({ kind: "pending" });
  });
});

describe("judging a pod its node does not start", () => {
  const scheduledPod = (sinceSeconds: number, waiting?: string): V1Pod =>
    ({
      metadata: { name: "p" },
      spec: { nodeName: "worker-3", containers: [] },
      status: {
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "True",
            lastTransitionTime: new Date(NOW - sinceSeconds * 1000).toISOString(),
          },
        ],
        ...(waiting
          ? { containerStatuses: [{ name: "runner", state: { waiting: { reason: waiting } } }] }
          : {}),
      },
    }) as unknown as V1Pod;

  it("waits within the limit, then gives it up naming the node and what the containers wait for", () => {
    expect(judge(scheduledPod(599, "ContainerCreating"))).toEqual({ kind: "pending" });
    expect(judge(scheduledPod(600, "ContainerCreating"))).toEqual({
      kind: "lost",
      retry: true,
      elsewhere: true,
      reason: "node worker-3 did not start the pod within 600 s (ContainerCreating)",
    });
    expect(judge(scheduledPod(900))).toMatchObject({
      reason: "node worker-3 did not start the pod within 900 s (Pending)",
    });
  });

  it("says an image cannot be pulled, not that the pod is slow, when both are true", () => {
    expect(judge(scheduledPod(900, "ImagePullBackOff"))).toMatchObject({ kind: "lost", retry: false });
  });
});

describe("judging a pod whose tests container failed", () => {
  const failedPod = (runner: number, tests: { exitCode: number; reason?: string }): V1Pod =>
    ({
      metadata: { name: "p" },
      spec: { nodeName: "worker-3", containers: [] },
      status: {
        phase: "Failed",
        containerStatuses: [
          { name: "runner", state: { terminated: { exitCode: runner } } },
          { name: "tests", state: { terminated: tests } },
        ],
      },
    }) as unknown as V1Pod;

  it("loses the iteration to the infrastructure, to run again, when the runner failed with it", () => {
    // The runner ends with exit 2 once its spawner has gone: that is not the runner's own failure.
    expect(judge(failedPod(2, { exitCode: 137, reason: "Error" }))).toEqual({
      kind: "lost",
      retry: true,
      reason: "its tests container was killed (exit 137, Error)",
    });
    expect(judge(failedPod(1, { exitCode: 70 }))).toEqual({
      kind: "lost",
      retry: true,
      reason: "its tests container failed (exit 70)",
    });
  });

  it("reads the runner's log when the runner finished, saying why only a complete stream will do", () => {
    expect(judge(failedPod(0, { exitCode: 143 }))).toEqual({
      kind: "succeeded",
      pod: "p",
      testsFailed: "its tests container was killed (exit 143)",
    });
  });

  it("leaves a runner failure the runner's when its tests container ended well", () => {
    expect(judge(failedPod(2, { exitCode: 0 }))).toEqual({ kind: "runner-failed", pod: "p", exitCode: 2 });
  });
});
