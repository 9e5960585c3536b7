import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { ExecuteShardInput, ShardExecutor } from "../../src/runs/shard-executor.ts";

/**
 * Runs a shard's tests against the clusters it is handed (round-robin by iteration, as the real
 * executors do) with seeded outcomes: every test fails 2% of the time, a bad cluster (a quarter of
 * them) adds 10 points, and in the PR arm `regressed` fails 50 points more often. `[Invariant]`
 * monitors pass. `before` runs first, e.g. to hold a shard until the test lets it finish.
 *
 * Outcomes depend on the seed, the shard, the iteration and the order clusters were first seen in,
 * never on run ids or cluster names (random in the tests): a test sees the same data on every run.
 */
export function weatherExecutor(options: {
  tests: readonly string[];
  regressed: string;
  payload: string;
  executed: { shards: number; executions: number };
  seed?: string;
  before?: (input: ExecuteShardInput) => Promise<"run" | "cancelled">;
}): ShardExecutor {
  const { tests, regressed, executed, seed = "weather" } = options;
  const draw = (...parts: (string | number)[]) =>
    createHash("sha256")
      .update([seed, ...parts].join("\0"))
      .digest()
      .readUInt32BE(0) /
    2 ** 32;
  const seen = new Map<string, number>();
  const clusterNumber = (cluster: string) => {
    if (!seen.has(cluster)) seen.set(cluster, seen.size);
    return seen.get(cluster)!;
  };
  return {
    name: "weather",
    arches: async () => ["amd64"],
    async execute(input) {
      const { shard, outDir, clusters } = input;
      const resultsPath = join(outDir, "results.jsonl");
      if ((await options.before?.(input)) === "cancelled")
        return { status: "cancelled", resultsPath, records: 0 };
      const records: ResultRecord[] = [];
      for (let i = 0; i < shard.iterations.count; i++) {
        const iteration = shard.iterations.first + i;
        for (const { arm, components } of shard.plan.arms) {
          const leases = clusters?.[arm] ?? [];
          const cluster = leases[iteration % leases.length]!.cluster.id;
          const number = clusterNumber(cluster);
          const bad = draw("cluster", number) < 0.25 ? 0.1 : 0;
          for (const component of components) {
            for (const name of component.tests ?? tests) {
              const p = 0.02 + bad + (arm === "pr" && name === regressed ? 0.5 : 0);
              const failed =
                !name.includes("[Invariant]") && draw(shard.id, number, name, arm, iteration) < p;
              records.push({
                name,
                lifecycle: "blocking",
                duration: 1,
                result: failed ? "failed" : "passed",
                output: failed ? "connection reset by peer" : "",
                arm,
                arch: shard.arch,
                iteration,
                attempt: 0,
                component: component.component,
                cluster,
                payload: options.payload,
              });
            }
          }
        }
      }
      await mkdir(outDir, { recursive: true });
      await writeFile(resultsPath, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
      executed.shards++;
      executed.executions += records.length;
      return { status: "completed", resultsPath, records: records.length };
    },
  };
}
