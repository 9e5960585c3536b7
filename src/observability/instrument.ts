import type { RunStore } from "../queue/run-store.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { Metrics } from "./metrics.ts";
import type { RunActivity } from "./run-activity.ts";

/** The run store, recording every state a run enters (transition counter, runs by state, recent runs). */
export function instrumentRunStore(
  store: RunStore,
  observers: { metrics: Metrics; activity: RunActivity },
): RunStore {
  const { metrics, activity } = observers;
  const observe = async (run: RunRecord | undefined, previousState?: RunRecord["state"]) => {
    if (!run || run.state === previousState) return;
    metrics.runTransition({ state: run.state, ...(run.conclusion ? { conclusion: run.conclusion } : {}) });
    await activity.record(run);
  };
  const transition: RunStore["transition"] = async (id, event) => {
    const change = await store.transition(id, event);
    if (change) await observe(change.after, change.before.state);
    return change;
  };
  return {
    ...store,
    async create(run) {
      const result = await store.create(run);
      if (result.created) await observe(result.run);
      return result;
    },
    transition,
    apply: async (id, event) => (await transition(id, event))?.after,
  };
}

/** The executor, timing every shard by arch, executor and outcome. */
export function instrumentExecutor(
  executor: ShardExecutor,
  metrics: Metrics,
  now: () => number = performance.now.bind(performance),
): ShardExecutor {
  return {
    name: executor.name,
    arches: () => executor.arches(),
    async execute(input) {
      const started = now();
      const record = (status: string) =>
        metrics.shardFinished({
          arch: input.shard.arch,
          executor: executor.name,
          status,
          seconds: (now() - started) / 1000,
        });
      try {
        const outcome = await executor.execute(input);
        record(outcome.status);
        return outcome;
      } catch (error) {
        record("error");
        throw error;
      }
    },
  };
}

/** An installation's Octokit, reporting the rate limit left after every response (successful or not). */
export function instrumentOctokit<T extends GitHubClient>(
  octokit: T,
  metrics: Metrics,
  installation: number,
): T {
  const observe = (headers: Record<string, unknown> | undefined) => {
    const remaining = Number(headers?.["x-ratelimit-remaining"]);
    if (Number.isFinite(remaining)) {
      metrics.githubRateLimit({
        installation,
        resource: String(headers?.["x-ratelimit-resource"] ?? "core"),
        remaining,
      });
    }
  };
  octokit.hook.after("request", (response) => observe(response.headers));
  octokit.hook.error("request", (error) => {
    observe((error as { response?: { headers?: Record<string, unknown> } }).response?.headers);
    throw error;
  });
  return octokit;
}
