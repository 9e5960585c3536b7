import { samePayload } from "../registry/same-payload.ts";
import { clusterVersionSchema, clusterVersionState } from "./cluster-version.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";

/**
 * Polls a leased cluster's API (its ClusterVersion) and calls `onLost` once when it stops answering
 * `failures` times in a row, or when it runs (or moves to) none of `payloads` — the one it was
 * leased for and, in an upgrade run, the target its own [Upgrade] test moves it to: anything else
 * means somebody else moved it. Returns the function that stops watching.
 */
export function watchClusterHealth(options: {
  objects: KubeObjects;
  payloads: readonly string[];
  pollMs: number;
  failures: number;
  onLost: (reason: string) => void;
}): () => void {
  const { objects, payloads, pollMs, failures, onLost } = options;
  let failed = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const lose = (reason: string) => {
    stopped = true;
    onLost(reason);
  };
  const check = async () => {
    try {
      const found = await objects.get("clusterVersions", "version");
      if (stopped) return;
      if (found === undefined) throw new Error("its ClusterVersion is gone");
      const running = clusterVersionState(clusterVersionSchema.parse(found)).payload;
      if (running !== undefined && !payloads.some((payload) => samePayload(running, payload))) {
        return lose(`${objects.name} now runs ${running}, not ${payloads.join(" or ")}`);
      }
      failed = 0;
    } catch (error) {
      if (stopped) return;
      failed += 1;
      if (failed >= failures) {
        const reason = error instanceof Error ? error.message : String(error);
        return lose(`${objects.name} did not answer ${failed} times in a row (${reason})`);
      }
    }
    if (!stopped) timer = setTimeout(() => void check(), pollMs).unref();
  };
  timer = setTimeout(() => void check(), pollMs).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
