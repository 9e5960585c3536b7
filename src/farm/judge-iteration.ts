import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import { RUNNER_CONTAINER, TESTS_CONTAINER } from "./build-iteration-job.ts";

export type IterationState =
  /** Not decided yet: waiting to be scheduled, pulling, running. */
  | { kind: "pending" }
  /**
   * The runner finished; its log holds the records. `testsFailed`: the tests container did not
   * (why): only a complete stream counts then, anything less is the infrastructure's loss.
   */
  | { kind: "succeeded"; pod: string; testsFailed?: string }
  /** The runner itself gave up (bad binary, unusable plan): its log says why; running it again would not help. */
  | { kind: "runner-failed"; pod: string; exitCode: number }
  /**
   * The infrastructure lost the iteration; never a test failure. `retry`: worth another attempt;
   * `elsewhere`: on another cluster, this one could not place it.
   */
  | { kind: "lost"; reason: string; retry: boolean; elsewhere?: boolean };

const IMAGE_PULL = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);
const CONFIG_ERRORS = new Set(["CreateContainerConfigError", "CreateContainerError"]);
const DISRUPTIONS: Record<string, string> = {
  PreemptionByScheduler: "preempted by a higher-priority pod",
  DeletionByTaintManager: "its node was lost (deleted by the taint manager)",
  EvictionByEvictionAPI: "evicted through the eviction API (a node drain)",
  DeletionByPodGC: "its node disappeared (pod garbage collection)",
  TerminationByKubelet: "terminated by the kubelet (node pressure or shutdown)",
};

/**
 * What a Job and its pods say about one iteration. Pods that were deleted still count, as last
 * seen: a pod gone with its node is how a lost node shows. Pure, so every infrastructure failure
 * mode is a table test.
 */
export function judgeIteration(observed: {
  job: V1Job | undefined;
  pods: readonly V1Pod[];
  /** Now, in ms since the epoch; with pendingMs, gives up a pod that stays Pending. */
  now: number;
  pendingMs: number;
}): IterationState {
  const { job, pods } = observed;
  for (const pod of pods) {
    const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    for (const status of statuses) {
      const waiting = status.state?.waiting;
      if (waiting?.reason && IMAGE_PULL.has(waiting.reason)) {
        return {
          kind: "lost",
          retry: false,
          reason: `cannot pull image ${status.image || imageOf(pod, status.name)}${pod.spec?.nodeName ? ` on node ${pod.spec.nodeName}` : ""}: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`,
        };
      }
      if (waiting?.reason && CONFIG_ERRORS.has(waiting.reason)) {
        return {
          kind: "lost",
          retry: false,
          reason: `the pod cannot start: ${waiting.message ?? waiting.reason}`,
        };
      }
    }
    const stuck = pendingFor(pod, observed.now);
    if (stuck !== undefined && stuck.ms >= observed.pendingMs) {
      const seconds = Math.round(stuck.ms / 1000);
      return {
        kind: "lost",
        retry: true,
        elsewhere: true,
        reason:
          stuck.node === undefined
            ? `no node could take the pod for ${seconds} s: ${stuck.message}`
            : `node ${stuck.node} did not start the pod within ${seconds} s (${stuck.message})`,
      };
    }
  }
  const succeeded = pods.find((p) => p.status?.phase === "Succeeded");
  if (succeeded) return { kind: "succeeded", pod: succeeded.metadata!.name! };
  const failed = pods.find((p) => p.status?.phase === "Failed") ?? pods.find(disrupted);
  if (failed) return judgeFailedPod(failed);
  const jobFailed = job?.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
  if (jobFailed?.reason === "DeadlineExceeded") {
    return {
      kind: "lost",
      retry: false,
      reason: `the iteration ran longer than the Job's deadline (${job?.spec?.activeDeadlineSeconds ?? "?"} s)`,
    };
  }
  if (jobFailed) {
    return {
      kind: "lost",
      retry: true,
      reason: `the pod disappeared before finishing (${jobFailed.reason ?? "Job failed"})`,
    };
  }
  return { kind: "pending" };
}

function judgeFailedPod(pod: V1Pod): IterationState {
  const name = pod.metadata!.name!;
  const status = pod.status ?? {};
  if (status.reason === "Evicted") {
    return { kind: "lost", retry: true, reason: `evicted${status.message ? `: ${status.message}` : ""}` };
  }
  const disruption = status.conditions?.find((c) => c.type === "DisruptionTarget" && c.status === "True");
  if (disruption) {
    return {
      kind: "lost",
      retry: true,
      reason: DISRUPTIONS[disruption.reason ?? ""] ?? `disrupted (${disruption.reason})`,
    };
  }
  const oom = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].find(
    (c) => c.state?.terminated?.reason === "OOMKilled",
  );
  if (oom) {
    const limit = pod.spec?.containers.find((c) => c.name === oom.name)?.resources?.limits?.memory;
    return { kind: "lost", retry: true, reason: `OOM-killed${limit ? ` (memory limit ${limit})` : ""}` };
  }
  const init = status.initContainerStatuses?.find((c) => (c.state?.terminated?.exitCode ?? 0) !== 0);
  if (init) {
    return {
      kind: "lost",
      retry: false,
      reason: `copying the test binary out of ${init.image || imageOf(pod, init.name)} failed (exit ${init.state!.terminated!.exitCode})`,
    };
  }
  const runner = status.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER)?.state?.terminated;
  if (runner && (runner.exitCode === 137 || runner.exitCode === 143)) {
    return { kind: "lost", retry: true, reason: `the runner was killed (exit ${runner.exitCode})` };
  }
  // The tests' container ends when the runner hangs up: failing, it took the runner's tests along
  // (the runner then fails for want of them), which no test result explains.
  const tests = status.containerStatuses?.find((c) => c.name === TESTS_CONTAINER)?.state?.terminated;
  if (tests && tests.exitCode !== 0) {
    const testsFailed = `its tests container ${tests.exitCode === 137 || tests.exitCode === 143 ? "was killed" : "failed"} (exit ${tests.exitCode}${tests.reason ? `, ${tests.reason}` : ""})`;
    if (runner?.exitCode === 0) return { kind: "succeeded", pod: name, testsFailed };
    return { kind: "lost", retry: true, reason: testsFailed };
  }
  if (runner) return { kind: "runner-failed", pod: name, exitCode: runner.exitCode };
  return { kind: "lost", retry: true, reason: `the pod failed${status.reason ? ` (${status.reason})` : ""}` };
}

/**
 * How long a Pending pod has been stuck, and why as far as its status says: since the scheduler
 * last failed to place it (no `node`), or since it was placed on a node that has not started it
 * (a sandbox or network that will not come up, a volume that will not mount). Undefined when the
 * pod is not Pending or the status carries no time.
 */
function pendingFor(pod: V1Pod, now: number): { ms: number; node?: string; message: string } | undefined {
  if (pod.status?.phase !== "Pending") return undefined;
  const node = pod.spec?.nodeName;
  const scheduled = pod.status.conditions?.find((c) => c.type === "PodScheduled");
  if (!scheduled) return undefined;
  if (!node && !(scheduled.status === "False" && scheduled.reason === "Unschedulable")) return undefined;
  // Typed as a Date, but objects from watches keep the API's RFC 3339 string.
  const since = scheduled.lastTransitionTime && new Date(scheduled.lastTransitionTime).getTime();
  if (!since || Number.isNaN(since)) return undefined;
  if (!node) return { ms: now - since, message: scheduled.message ?? "Unschedulable" };
  const waiting = [...(pod.status.initContainerStatuses ?? []), ...(pod.status.containerStatuses ?? [])]
    .map((c) => c.state?.waiting?.reason)
    .filter((reason) => reason !== undefined);
  return { ms: now - since, node, message: [...new Set(waiting)].join(", ") || "Pending" };
}

function disrupted(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "DisruptionTarget" && c.status === "True") ?? false;
}

function imageOf(pod: V1Pod, container: V1ContainerStatus["name"]): string {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  return all.find((c) => c.name === container)?.image ?? "(unknown image)";
}
