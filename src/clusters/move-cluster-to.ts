import { setTimeout as delay } from "node:timers/promises";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { samePayload } from "../registry/same-payload.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import { readClusterVersion } from "./read-cluster-version.ts";

/**
 * Moves a cluster to `payload` (a pullspec by digest) as the cluster-version operator expects it:
 * `spec.desiredUpdate` {image, force — our payloads are unsigned}, then waits until its
 * ClusterVersion has settled there (the newest history entry Completed for that image, Available,
 * not Progressing). The cluster is read first, and asked only when it neither runs nor moves to
 * the payload already: a resumed run that moved it before waits for that upgrade instead of asking
 * again. Throws ClustersUnavailableError when the operator refuses the update (ReleaseAccepted=False
 * naming the image) or it has not settled in `timeoutMs`.
 */
export async function moveClusterTo(input: {
  objects: KubeObjects;
  payload: string;
  timeoutMs: number;
  pollMs: number;
  signal?: AbortSignal;
}): Promise<void> {
  const { objects, payload } = input;
  const deadline = Date.now() + input.timeoutMs;
  let state = await readClusterVersion(objects);
  if (state.payload === undefined || !samePayload(state.payload, payload)) {
    await objects.mergePatch("clusterVersions", "version", {
      spec: { desiredUpdate: { image: payload, version: null, force: true } },
    });
  }
  for (;;) {
    state = await readClusterVersion(objects);
    if (state.settled && state.payload !== undefined && samePayload(state.payload, payload)) return;
    // The operator refused this update: it never starts by waiting (the message names the image).
    if (state.refused?.includes(payload)) {
      throw new ClustersUnavailableError(
        `${objects.name}: the cluster-version operator refused the upgrade to ${payload} (ReleaseAccepted=False): ${state.refused}`,
        { reason: "the cluster-version operator refused the upgrade" },
      );
    }
    if (Date.now() >= deadline) {
      throw new ClustersUnavailableError(
        `${objects.name} did not complete its upgrade to ${payload} in ${Math.round(input.timeoutMs / 1000)} s (${state.detail})`,
        { reason: `the upgrade did not complete in ${Math.round(input.timeoutMs / 1000)} s` },
      );
    }
    await delay(input.pollMs, undefined, input.signal ? { signal: input.signal } : {});
  }
}
