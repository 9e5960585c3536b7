import type { ClusterLease } from "../../src/runs/clusters-under-test.ts";
import type { TestClusterProvider } from "./test-cluster-provider.ts";

/** A PR run's payloads: the PR arm's own, and the released one its baseline runs. */
export const PR_PAYLOAD = `registry.test/pr/release@sha256:${"e".repeat(64)}`;
export const BASE_PAYLOAD = `registry.test/ocp/release@sha256:${"f".repeat(64)}`;

/** A PR run's clusters under test: `count` per arm, each arm's running its own payload. */
export async function leaseBothArms(
  provider: TestClusterProvider,
  options: { runId: string; count: number },
): Promise<Record<"pr" | "baseline", ClusterLease[]>> {
  const { pr = [], baseline = [] } = await provider.acquire({
    runId: options.runId,
    arch: "amd64",
    arms: [
      { arm: "pr", payload: PR_PAYLOAD },
      { arm: "baseline", payload: BASE_PAYLOAD },
    ],
    count: options.count,
    signal: new AbortController().signal,
  });
  return { pr, baseline };
}
